"""DebateDesk's web server: Streamlit serving app.py and its pages, plus the desk's sign-in routes and cookies
(components/web.py), and the public address of each published fact-check, answered from the database
(components/published.py). ``streamlit run server.py`` finds ``app`` and serves it (Streamlit's st.App, on uvicorn)."""

import streamlit as st
from starlette.middleware import Middleware

from components import published
from components.preload import preload
from components.web import ROUTES, DeskMiddleware

preload()  # the page code and its libraries imported, then kept out of the garbage collector's scans (components/preload.py)

app = st.App("app.py", routes=[*ROUTES, *published.ROUTES], middleware=[Middleware(DeskMiddleware)])
