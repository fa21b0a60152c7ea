"""Fair shares of the parser processes: one user's many slow uploads do not make another
user's upload wait behind all of them (``tools.parser_shares``, issue 24)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import requests

from core import plugin_host
from core.extensions import db
from core.models import ApiToken, User
from tests.support.live_server import LiveServer
from tests.support.processes import wait_until
from tests.tools.sample_plugins.gated import MIME_TYPE, gated_file, open_gate, started


def make_token(app, name: str) -> tuple[str, str]:
    with app.app_context():
        user = User.make(name, "password")
        db.session.add(user)
        row, token = ApiToken.make(user, "t")
        db.session.add(row)
        db.session.commit()
        return user.id, token


def upload(server_url: str, folder: Path, token: str, name: str) -> requests.Response:
    """Upload the gated file ``name`` (made in ``folder``) as the token's user."""
    files = {"file": (f"{name}.bin", gated_file(folder, name), MIME_TYPE)}
    headers = {"Authorization": f"Bearer {token}"}
    return requests.post(f"{server_url}/api/uploads", headers=headers, files=files, timeout=60)


def test_a_user_whose_upload_arrives_behind_anothers_many_slow_ones_is_read_next(
    make_app, tmp_path: Path
):
    """Issue 24: the parser processes went to whichever request polled first, so one user's
    PDFs could hold them all and another user's upload waited behind every one, or failed."""
    app = make_app(LOOKOUT_PLUGINS="tests.tools.sample_plugins.gated", PARSER_PROCESSES=2)
    ann, ann_token = make_token(app, "ann")
    bob, bob_token = make_token(app, "bob")
    with app.app_context():
        shares = plugin_host.get_host().parsers

    ann_files = [f"ann{n}" for n in range(5)]
    with LiveServer(app) as server, ThreadPoolExecutor(max_workers=6) as pool:
        send = partial(upload, server.url, tmp_path)
        try:
            ann_uploads = [pool.submit(send, ann_token, name) for name in ann_files]
            wait_until(
                lambda: len(started(tmp_path)) == 2,
                30,
                "ann's files take both processes",
                interval=0.02,
            )
            wait_until(
                lambda: shares.waiting() == {ann: 3}, 30, "ann's other files wait", interval=0.02
            )

            bob_upload = pool.submit(send, bob_token, "bob0")
            wait_until(
                lambda: shares.waiting() == {ann: 3, bob: 1}, 30, "bob's file waits", interval=0.02
            )
            open_gate(tmp_path, started(tmp_path)[0])  # one of ann's files is read

            wait_until(
                lambda: len(started(tmp_path)) == 3,
                30,
                "a freed process takes a file",
                interval=0.02,
            )
            assert "bob0" in started(tmp_path), started(tmp_path)
            assert shares.waiting() == {ann: 3}
            open_gate(tmp_path, "bob0")
            answer = bob_upload.result(timeout=60)
            assert answer.status_code == 201, answer.text
        finally:
            for name in [*ann_files, "bob0"]:
                open_gate(tmp_path, name)
        assert [u.result(timeout=60).status_code for u in ann_uploads] == [201] * 5


def test_an_upload_that_waits_past_the_queue_bound_is_refused_with_what_to_do(
    make_app, tmp_path: Path
):
    app = make_app(
        LOOKOUT_PLUGINS="tests.tools.sample_plugins.gated",
        PARSER_PROCESSES=1,
        PARSER_QUEUE_SECONDS=1,
    )
    ann, ann_token = make_token(app, "ann")
    _, bob_token = make_token(app, "bob")
    with app.app_context():
        shares = plugin_host.get_host().parsers

    with LiveServer(app) as server, ThreadPoolExecutor(max_workers=1) as pool:
        send = partial(upload, server.url, tmp_path)
        try:
            holding = pool.submit(send, ann_token, "ann0")
            wait_until(
                lambda: shares.held() == {ann: 1}, 30, "ann's file takes the process", interval=0.02
            )

            refused = send(bob_token, "bob0")

            assert refused.status_code == 503
            assert refused.json()["error"]["message"] == (
                "Lookout's readers were busy with other people's pages and files, so bob0.bin "
                "was not read. Try again in a minute."
            )
            assert int(refused.headers["Retry-After"]) >= 1
            assert "bob0" not in started(tmp_path)
        finally:
            open_gate(tmp_path, "ann0")
        assert holding.result(timeout=60).status_code == 201
