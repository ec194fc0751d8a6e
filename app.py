"""DebateDesk: page config, shared state, navigation. Nothing else."""

import streamlit as st

from components import state
from components.pages import APP_NAME, PAGES, run_page

st.set_page_config(page_title=APP_NAME, page_icon="⚖️", layout="wide")  # each page then names its tab (components.pages)
state.init_state()
navigation = st.navigation([st.Page(p.path, title=p.title, icon=p.icon, default=i == 0) for i, p in enumerate(PAGES)])
if (back := state.take_return_to()) is not None:
    st.switch_page(back[0], query_params=back[1])
if st.query_params.get(state.RUN_PARAM) and navigation.url_path != "history":  # a run's link opens it on History, whichever page
    st.switch_page("pages/history.py", query_params={state.RUN_PARAM: st.query_params[state.RUN_PARAM]})
run_page(navigation)  # the page; a database that stops answering is said plainly
