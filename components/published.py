"""The public address of a published fact-check, ``/app/static/claimreview/<claim id>.json``, answered from the database.

Every request reads the claim's row (``ClaimQueue.served``): the ClaimReview while it is published, its latest correction
included, the "withdrawn" notice once unpublished, a plain 404 only for an address that was never published. Nothing is
copied to a file or kept in this process, so an action by any editor, in any process of the desk, is what the next reader
gets, and two editors publishing at once cannot leave a published claim without its document (they once did: the loser took
away the file the winner had just written). The route takes precedence over Streamlit's static folder of the same prefix.
"""

from __future__ import annotations

import functools
import logging
import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from components.web import DATABASE_AWAY
from pipelines.core.config import AppSettings
from pipelines.core.text.safety import json_for_html
from pipelines.newsroom.publishing import STATIC_ROUTE
from pipelines.newsroom.queue import ClaimQueue
from pipelines.record.store import RunStore

log = logging.getLogger("debatedesk.published")
HEADERS = {
    "Cache-Control": "no-cache",  # a correction or a withdrawal reaches the next reader
    "X-Content-Type-Options": "nosniff",
    "Access-Control-Allow-Origin": "*",  # public: a newsroom's site or a fact-check index may read it
}


@functools.lru_cache(maxsize=4)
def _queue(database_url: str) -> ClaimQueue:
    return ClaimQueue(RunStore(database_url).engine)


def _json(doc: object, status: int) -> Response:
    return Response(json_for_html(doc) + "\n", status_code=status, media_type="application/json", headers=HEADERS)


async def _serve(request: Request) -> Response:
    name = str(request.path_params.get("name", ""))
    found = re.fullmatch(r"([0-9a-f]{6,32})\.json", name)
    if found is None:
        return _json({"error": "no published fact-check at this address"}, 404)
    try:
        doc = await run_in_threadpool(_queue(AppSettings().sqlite_url).served, found.group(1))  # off the event loop
    except DATABASE_AWAY as exc:  # said plainly; a reader or crawler tries again
        log.error("published fact-check not served, the database cannot be reached: %s", exc)
        response = _json({"error": "the desk's database cannot be reached just now; try again in a moment"}, 503)
        response.headers["Retry-After"] = "30"
        return response
    if doc is None:
        return _json({"error": "no published fact-check at this address"}, 404)
    return _json(doc, 200)


ROUTES = [Route(f"/{STATIC_ROUTE}/{{name}}", _serve, methods=["GET", "HEAD"])]

__all__ = ["ROUTES"]
