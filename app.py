"""DebateDesk: page config, shared state, navigation. Nothing else."""

import streamlit as st

from components import state

st.set_page_config(page_title="DebateDesk", page_icon="⚖️", layout="wide")
state.init_state()
navigation = st.navigation(
    [
        st.Page("pages/verify.py", title="Verify a claim", icon="⚖️", default=True),
        st.Page("pages/history.py", title="History", icon="🗂️"),
        st.Page("pages/corpora.py", title="Corpora", icon="📚"),
        st.Page("pages/batch.py", title="Batch", icon="📋"),
        st.Page("pages/benchmark.py", title="Benchmark", icon="📊"),
    ]
)
if (page := state.take_return_to()) is not None:
    st.switch_page(page)
navigation.run()
