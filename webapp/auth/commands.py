"""Command-line account management: `flask users ...` and `flask tokens ...`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click
from flask import Flask
from flask.cli import AppGroup

from core.extensions import db
from core.models import User
from core.scopes import DEFAULT_SCOPES, SCOPES
from webapp.auth import accounts
from webapp.auth.scopes import describe_scopes

users_cli = AppGroup("users", help="Create, list, disable and enable accounts; set passwords.")
tokens_cli = AppGroup("tokens", help="Create API tokens.")


def get_user(name: str) -> User:
    """Return the user with this name, or stop the command with a sentence."""
    user = accounts.find_account(name)
    if user is None:
        raise click.ClickException(f"There is no account named {name!r}. Create it first.")
    return user


@contextmanager
def said_as_click_errors() -> Iterator[None]:
    """Turn a refused account change into the command's error sentence."""
    try:
        yield
    except accounts.AccountError as error:
        raise click.ClickException(error.message) from None


@users_cli.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Give the account the admin role too.")
@click.option("--password", help="The password; a random one is generated and printed if omitted.")
def create_user(name: str, admin: bool, password: str | None) -> None:
    """Create an account."""
    with said_as_click_errors():
        user, generated = accounts.create_account(name, password, admin=admin)
    role = "admin" if admin else "user"
    click.echo(f"Created {role} account {user.name!r}.")
    if generated:
        click.echo(f"Password (shown once): {generated}")


@users_cli.command("set-password")
@click.argument("name")
@click.option("--password", help="The new password; a random one is generated and printed if none.")
def set_password(name: str, password: str | None) -> None:
    """Set an account's password, end its sessions, and lift a lock from failed sign-ins."""
    with said_as_click_errors():
        generated = accounts.set_password(get_user(name), password)
    click.echo(f"Set the password of {name!r}; its sessions ended; failed sign-ins are forgotten.")
    if generated:
        click.echo(f"Password (shown once): {generated}")


@users_cli.command("disable")
@click.argument("name")
def disable_user(name: str) -> None:
    """Disable an account: its sessions and API tokens stop working at once."""
    with said_as_click_errors():
        accounts.set_disabled(get_user(name), True)
    click.echo(f"Disabled {name!r}: its sessions and API tokens no longer work.")


@users_cli.command("enable")
@click.argument("name")
def enable_user(name: str) -> None:
    """Enable a disabled account again (and lift a lock from failed sign-ins)."""
    with said_as_click_errors():
        accounts.set_disabled(get_user(name), False)
    click.echo(f"Enabled {name!r}.")


@users_cli.command("list")
def list_users() -> None:
    """List the accounts: name, roles, and whether each is disabled."""
    for user in db.session.scalars(db.select(User).order_by(User.name)):
        state = "  disabled" if user.disabled else ""
        click.echo(f"{user.name}  {','.join(user.roles)}{state}")


@users_cli.command("ensure-admin")
@click.option("--name", default="admin", show_default=True)
def ensure_admin(name: str) -> None:
    """Create an admin with a random password, printed once, unless any admin exists."""
    users = db.session.scalars(db.select(User)).all()
    if any(user.is_admin for user in users):
        return
    if any(user.name == name for user in users):
        raise click.ClickException(
            f"No admin exists, and the name {name!r} is taken by a user. Run "
            "'flask --app webapp users create NAME --admin' with another name."
        )
    _, password = accounts.create_account(name, admin=True)
    click.echo(f"Created the admin account {name!r} with password {password} (shown once).")
    click.echo(f"To set a new password later: flask --app webapp users set-password {name}")


@tokens_cli.command("create")
@click.argument("name")
@click.argument("token_name")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(list(SCOPES)),
    help=f"What the token may do (repeat for more). {describe_scopes()} Default: chat; "
    "admin is for an administrator's token only.",
)
@click.option(
    "--expires-in-days",
    type=click.IntRange(1, accounts.TOKEN_MAX_DAYS),
    help="The token stops working this many days from now; without it, it never expires.",
)
def create_token(
    name: str, token_name: str, scopes: tuple[str, ...], expires_in_days: int | None
) -> None:
    """Create an API token for the account NAME and print it once."""
    with said_as_click_errors():
        _, token = accounts.create_token(
            get_user(name), token_name, list(scopes or DEFAULT_SCOPES), expires_in_days
        )
    click.echo(token)


def init_commands(app: Flask) -> None:
    """Register the command groups."""
    app.cli.add_command(users_cli)
    app.cli.add_command(tokens_cli)
