"""An admin sets a user's own limits over the API: they replace the defaults, null clears
them, and a value that is not a whole number from 1 up is refused naming the limit."""

from __future__ import annotations


def test_an_admin_sets_and_clears_a_users_own_limit(signed_in_client, make_user):
    admin = signed_in_client(admin=True)
    user = make_user("limited")
    url = f"/api/admin/users/{user.id}/limits"

    saved = admin.put(url, json={"openTurns": 5, "uploadBytes": 2})

    assert saved.status_code == 200, saved.get_json()
    limits = {row["limit"]: row for row in saved.get_json()["limits"]}
    assert limits["openTurns"]["value"] == 5 and limits["openTurns"]["default"] == 3
    assert limits["uploadBytes"]["unit"] == "MB"
    shown = {row["limit"]: row for row in saved.get_json()["remaining"]}
    assert shown["openTurns"]["allowed"] == 5
    assert shown["uploadBytes"]["allowed"] == 2_000_000
    cleared = admin.put(url, json={"openTurns": None}).get_json()
    limits = {row["limit"]: row for row in cleared["limits"]}
    assert limits["openTurns"]["value"] is None and limits["uploadBytes"]["value"] == 2
    assert {row["limit"]: row for row in cleared["remaining"]}["openTurns"]["allowed"] == 3


def test_a_limit_that_is_not_a_whole_number_from_1_is_refused(signed_in_client, make_user):
    admin = signed_in_client(admin=True)
    user = make_user("limited")

    refused = admin.put(f"/api/admin/users/{user.id}/limits", json={"turnsPerHour": 0})

    assert refused.status_code == 400
    error = refused.get_json()["error"]
    assert error["fields"]["turnsPerHour"] == ["A whole number from 1 to 10,000,000, or empty."]
    assert error["message"] == "A whole number from 1 to 10,000,000, or empty."
