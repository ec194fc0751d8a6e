"""Reusable Streamlit widgets: transcript, evidence table, badges, the config form, session state."""
