"""The desk's HTTP routes (components/web.py), driven with Starlette's test client: a page load without a live sign-in
goes to the sign-in form; the form answers a wrong name and a wrong password alike, refuses a post from another site and
a redirect to another site, and sets an HttpOnly session cookie that later loads carry; sign-out ends it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from components import web
from pipelines.newsroom.access.sessions import BROWSER_COOKIE, SESSION_COOKIE
from tests.fakes import users_file

HTML = {"accept": "text/html"}


def _desk_page(request: object) -> PlainTextResponse:
    return PlainTextResponse("the desk")


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[TestClient]:
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DEBATEDESK_USERS_FILE", str(users_file(tmp_path / "users.toml")))
    monkeypatch.setattr(web, "oidc_configured", lambda: False)
    app = Starlette(
        routes=[*web.ROUTES, Route("/", _desk_page), Route("/history", _desk_page)], middleware=[Middleware(web.DeskMiddleware)]
    )
    with TestClient(app, base_url="http://desk.test", follow_redirects=False) as client:
        yield client


def sign_in(client: TestClient, username: str, password: str, next_path: str = "/", origin: str = "http://desk.test"):  # type: ignore[no-untyped-def]
    data = {"username": username, "password": password, "next": next_path}
    return client.post(web.SIGN_IN_PATH, data=data, headers={"origin": origin})


def test_a_page_load_without_a_session_goes_to_the_form_and_gets_a_browser_cookie(client: TestClient) -> None:
    answer = client.get("/history?run=abc", headers=HTML)
    assert answer.status_code == 303 and answer.headers["location"] == "/desk/sign-in?next=%2Fhistory%3Frun%3Dabc"
    assert BROWSER_COOKIE in answer.cookies and "httponly" in answer.headers["set-cookie"].lower()
    form = client.get(answer.headers["location"])
    assert form.status_code == 200 and 'name="password"' in form.text and 'value="/history?run=abc"' in form.text
    assert client.get("/_stcore/health").status_code == 404, "Streamlit's own requests pass through untouched"


def test_signing_in_sets_an_httponly_session_cookie_that_keeps_the_person_signed_in(client: TestClient) -> None:
    client.get("/", headers=HTML)
    answer = sign_in(client, "ana", "pw-for-tests", next_path="/history")
    assert answer.status_code == 303 and answer.headers["location"] == "/history"
    cookie = answer.headers["set-cookie"].lower()
    assert cookie.startswith(SESSION_COOKIE) and "httponly" in cookie and "samesite=lax" in cookie and "max-age=43200" in cookie
    for _ in range(2):  # a reload, and another page
        page = client.get("/history", headers=HTML)
        assert page.status_code == 200 and page.text == "the desk"
    sessions, _ = web.desk()
    assert sessions.username(client.cookies.get(SESSION_COOKIE)) == "ana"


def test_a_wrong_password_and_an_unknown_name_get_the_same_answer(client: TestClient) -> None:
    wrong, unknown = sign_in(client, "ana", "nope"), sign_in(client, "nobody", "nope")
    assert wrong.status_code == unknown.status_code == 401
    assert "Unknown user name or wrong password." in wrong.text and "Unknown user name or wrong password." in unknown.text
    assert SESSION_COOKIE not in wrong.cookies and 'value="nobody"' in unknown.text
    assert sign_in(client, "<b>x</b>", "nope").text.count("<b>x</b>") == 0, "what was typed comes back escaped"


def test_repeated_failures_are_refused_for_a_while_even_with_the_right_password(client: TestClient) -> None:
    for _ in range(4):
        sign_in(client, "ana", "nope")
    answer = sign_in(client, "ana", "pw-for-tests")
    assert answer.status_code == 429 and "Too many failed sign-ins" in answer.text and SESSION_COOKIE not in answer.cookies


def test_a_form_posted_from_another_site_or_sent_on_to_another_site_is_refused(client: TestClient) -> None:
    forged = sign_in(client, "ana", "pw-for-tests", origin="http://evil.example")
    assert forged.status_code == 403 and SESSION_COOKIE not in forged.cookies
    for elsewhere in ("//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"):
        assert sign_in(client, "ana", "pw-for-tests", next_path=elsewhere).headers["location"] == "/"


def test_signing_out_ends_the_session_and_clears_the_cookie(client: TestClient) -> None:
    sign_in(client, "ana", "pw-for-tests")
    cookie = client.cookies.get(SESSION_COOKIE)
    answer = client.post(web.SIGN_OUT_PATH, headers={"origin": "http://desk.test"})
    assert answer.status_code == 303 and answer.headers["location"] == web.SIGN_IN_PATH
    sessions, _ = web.desk()
    assert sessions.username(cookie) is None
    client.cookies.set(SESSION_COOKIE, cookie or "")  # a browser that kept the old cookie anyway
    assert client.get("/", headers=HTML).status_code == 303


def test_without_a_users_file_nobody_is_sent_to_sign_in(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEBATEDESK_USERS_FILE")
    page = client.get("/", headers=HTML)
    assert page.status_code == 200 and BROWSER_COOKIE in page.cookies
    assert client.get(web.SIGN_IN_PATH).headers["location"] == "/"


def test_a_database_that_cannot_be_reached_gets_a_plain_page_not_a_server_error(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBATEDESK_DATABASE_URL", "postgresql+psycopg://desk@127.0.0.1:1/desk")  # nothing listens there
    page = client.get("/history", headers=HTML)
    assert page.status_code == 503 and "database cannot be reached just now" in page.text
    form = client.post(web.SIGN_IN_PATH, data={"username": "ana", "password": "pw-for-tests"}, headers={"origin": "http://desk.test"})
    assert form.status_code == 503 and "database cannot be reached just now" in form.text


@pytest.mark.parametrize("name", ["ana\x00", "\x00", "\u200b\u200b"])
def test_a_user_name_with_a_nul_or_nothing_visible_gets_a_plain_answer_not_a_server_error(client: TestClient, name: str) -> None:
    answer = sign_in(client, name, "pw-for-tests")
    assert answer.status_code == 400 and "user name" in answer.text and SESSION_COOKIE not in answer.cookies


def test_a_sign_out_posted_from_another_site_neither_ends_the_session_nor_clears_the_cookie(client: TestClient) -> None:
    sign_in(client, "ana", "pw-for-tests")
    cookie = client.cookies.get(SESSION_COOKIE)
    for headers in ({"origin": "http://evil.example"}, {"origin": "http://desk.test", "sec-fetch-site": "cross-site"}):
        answer = client.post(web.SIGN_OUT_PATH, headers=headers)
        assert answer.status_code == 403 and "another site" in answer.text
        assert SESSION_COOKIE not in answer.headers.get("set-cookie", ""), "the member's cookie is left alone"
    sessions, _ = web.desk()
    assert sessions.username(cookie) == "ana"
    assert client.get("/history", headers=HTML).status_code == 200


def test_a_sign_in_form_the_browser_says_crossed_sites_is_refused(client: TestClient) -> None:
    data = {"username": "ana", "password": "pw-for-tests", "next": "/"}
    answer = client.post(web.SIGN_IN_PATH, data=data, headers={"origin": "http://desk.test", "sec-fetch-site": "cross-site"})
    assert answer.status_code == 403 and SESSION_COOKIE not in answer.cookies


def test_checking_a_password_does_not_hold_up_the_server_s_other_requests(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """bcrypt takes about 0.3 s by design; on the event loop it stalled every page and socket of the server meanwhile."""
    import asyncio
    import threading

    import httpx

    from pipelines.newsroom.access.users import UsersFile

    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DEBATEDESK_USERS_FILE", str(users_file(tmp_path / "users.toml")))
    monkeypatch.setattr(web, "oidc_configured", lambda: False)
    slow_check = UsersFile.authenticate
    checking, served = threading.Event(), threading.Event()
    answered_while_checking: list[bool] = []

    def authenticate(self: UsersFile, username: str, password: str):  # type: ignore[no-untyped-def]
        # A slow hash that lasts until the other request is answered: a loop held by it could never answer, so
        # the check gives up after 10 s and says so. No clock decides the outcome, so a loaded machine cannot flake it.
        checking.set()
        answered_while_checking.append(served.wait(timeout=10))
        return slow_check(self, username, password)

    def ping_page(request: object) -> PlainTextResponse:
        served.set()
        return PlainTextResponse("the desk")

    monkeypatch.setattr(UsersFile, "authenticate", authenticate)
    app = Starlette(routes=[*web.ROUTES, Route("/ping", ping_page)])

    async def both() -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://desk.test") as http:

            async def ping() -> None:
                while not checking.is_set():  # a loop held by the check wakes here only once it is over
                    await asyncio.sleep(0.01)
                await http.get("/ping")

            data = {"username": "ana", "password": "pw-for-tests"}
            signed_in, _ = await asyncio.gather(http.post(web.SIGN_IN_PATH, data=data, headers={"origin": "http://desk.test"}), ping())
            return signed_in.status_code

    status = asyncio.run(both())
    assert answered_while_checking == [True], "another request was not answered while a password was checked"
    assert status == 303
