"""The `flask users` and `flask tokens` commands."""

from datetime import timedelta

from core.extensions import db
from core.models import ApiToken, User
from core.models.base import aware, utcnow


def find_user(app, name):
    with app.app_context():
        return db.session.scalar(db.select(User).filter_by(name=name))


def test_users_create_prints_a_generated_password_that_works(app):
    result = app.test_cli_runner().invoke(args=["users", "create", "alice"])
    assert result.exit_code == 0, result.output
    password = result.output.split("Password (shown once): ")[1].strip()
    user = find_user(app, "alice")
    assert user.check_password(password)
    assert user.roles == ["user"]


def test_users_create_admin_with_a_given_password(app):
    result = app.test_cli_runner().invoke(
        args=["users", "create", "root", "--admin", "--password", "long enough"]
    )
    assert result.exit_code == 0
    assert "Password" not in result.output
    user = find_user(app, "root")
    assert user.roles == ["user", "admin"]
    assert user.check_password("long enough")


def test_users_create_refuses_a_taken_name(app, make_user):
    make_user("alice")
    result = app.test_cli_runner().invoke(args=["users", "create", "alice"])
    assert result.exit_code != 0
    assert "already exists" in result.output


def test_ensure_admin_creates_one_admin_once(app):
    runner = app.test_cli_runner()
    first = runner.invoke(args=["users", "ensure-admin"])
    assert "Created the admin account 'admin'" in first.output
    assert "To set a new password later: flask --app webapp users set-password admin" in (
        first.output
    )
    assert find_user(app, "admin").is_admin
    second = runner.invoke(args=["users", "ensure-admin"])
    assert second.exit_code == 0
    assert second.output == ""


def test_tokens_create_prints_a_working_token_once(app, client, make_user):
    make_user("alice")
    result = app.test_cli_runner().invoke(args=["tokens", "create", "alice", "laptop"])
    assert result.exit_code == 0
    token = result.output.strip()
    response = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert response.get_json()["name"] == "alice"
    with app.app_context():
        assert db.session.scalar(db.select(ApiToken)).name == "laptop"


def test_tokens_create_names_a_missing_account(app):
    result = app.test_cli_runner().invoke(args=["tokens", "create", "ghost", "x"])
    assert result.exit_code != 0
    assert "There is no account named 'ghost'" in result.output


def test_users_set_password_prints_a_generated_one_that_works(app, make_user):
    make_user("alice")
    result = app.test_cli_runner().invoke(args=["users", "set-password", "alice"])
    assert result.exit_code == 0, result.output
    password = result.output.split("Password (shown once): ")[1].strip()
    assert find_user(app, "alice").check_password(password)
    assert not find_user(app, "alice").check_password("password")


def test_users_set_password_names_a_missing_account(app):
    result = app.test_cli_runner().invoke(args=["users", "set-password", "nobody"])
    assert result.exit_code != 0
    assert "There is no account named 'nobody'" in result.output


def test_users_disable_stops_sessions_and_tokens_and_enable_restores_them(
    app, client, make_user, make_token
):
    user = make_user("alice")
    token = make_token(user)
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/me", headers=headers).status_code == 200
    runner = app.test_cli_runner()
    result = runner.invoke(args=["users", "disable", "alice"])
    assert result.exit_code == 0, result.output
    assert client.get("/api/me", headers=headers).status_code == 401
    listed = runner.invoke(args=["users", "list"]).output
    assert "alice  user  disabled" in listed
    assert runner.invoke(args=["users", "enable", "alice"]).exit_code == 0
    assert client.get("/api/me", headers=headers).status_code == 200
    assert "alice  user\n" in runner.invoke(args=["users", "list"]).output


def test_users_disable_names_a_missing_account(app):
    result = app.test_cli_runner().invoke(args=["users", "disable", "nobody"])
    assert result.exit_code != 0
    assert "There is no account named 'nobody'" in result.output


def test_tokens_create_takes_the_scope_and_the_expiry(app, client, make_user):
    make_user("ada", admin=True)
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=["tokens", "create", "ada", "ops", "--scope", "admin", "--expires-in-days", "30"]
    )
    assert result.exit_code == 0, result.output
    headers = {"Authorization": f"Bearer {result.output.strip()}"}
    assert client.get("/api/admin/users", headers=headers).status_code == 200
    assert client.get("/api/conversations", headers=headers).status_code == 403
    with app.app_context():
        row = db.session.scalar(db.select(ApiToken))
        assert row.scopes == ["admin"]
        assert timedelta(days=29) < aware(row.expires_at) - utcnow() <= timedelta(days=30)


def test_tokens_create_refuses_the_admin_scope_to_a_user(app, make_user):
    make_user("alice")
    result = app.test_cli_runner().invoke(
        args=["tokens", "create", "alice", "x", "--scope", "admin"]
    )
    assert result.exit_code != 0
    assert "Only an administrator's token may have the admin scope." in result.output
