"""Command-line account management: `flask users ...` and `flask tokens ...`."""

from __future__ import annotations

import secrets

import click
from flask import Flask
from flask.cli import AppGroup

from webapp.auth import throttle
from webapp.extensions import db
from webapp.models import ApiToken, User

users_cli = AppGroup("users", help="Create, list, disable and enable accounts; set passwords.")
tokens_cli = AppGroup("tokens", help="Create API tokens.")


def get_user(name: str) -> User:
    """Return the user with this name, or stop the command with a sentence."""
    user = db.session.scalar(db.select(User).filter_by(name=name))
    if user is None:
        raise click.ClickException(f"There is no account named {name!r}. Create it first.")
    return user


@users_cli.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Give the account the admin role too.")
@click.option("--password", help="The password; a random one is generated and printed if omitted.")
def create_user(name: str, admin: bool, password: str | None) -> None:
    """Create an account."""
    if db.session.scalar(db.select(User).filter_by(name=name)) is not None:
        raise click.ClickException(f"An account named {name!r} already exists.")
    generated = password is None
    password = password or secrets.token_urlsafe(12)
    db.session.add(User.make(name, password, admin=admin))
    db.session.commit()
    role = "admin" if admin else "user"
    click.echo(f"Created {role} account {name!r}.")
    if generated:
        click.echo(f"Password (shown once): {password}")


@users_cli.command("set-password")
@click.argument("name")
@click.option("--password", help="The new password; a random one is generated and printed if none.")
def set_password(name: str, password: str | None) -> None:
    """Set an account's password, and lift a lock from failed sign-ins."""
    user = get_user(name)
    generated = password is None
    password = password or secrets.token_urlsafe(12)
    user.set_password(password)
    db.session.commit()
    throttle.clear_failures(name)
    click.echo(f"Set the password of {name!r}; failed sign-ins are forgotten.")
    if generated:
        click.echo(f"Password (shown once): {password}")


@users_cli.command("disable")
@click.argument("name")
def disable_user(name: str) -> None:
    """Disable an account: its sessions and API tokens stop working at once."""
    get_user(name).disabled = True
    db.session.commit()
    click.echo(f"Disabled {name!r}: its sessions and API tokens no longer work.")


@users_cli.command("enable")
@click.argument("name")
def enable_user(name: str) -> None:
    """Enable a disabled account again (and lift a lock from failed sign-ins)."""
    get_user(name).disabled = False
    db.session.commit()
    throttle.clear_failures(name)
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
    password = secrets.token_urlsafe(12)
    db.session.add(User.make(name, password, admin=True))
    db.session.commit()
    click.echo(f"Created the admin account {name!r} with password {password} (shown once).")
    click.echo(f"To set a new password later: flask --app webapp users set-password {name}")


@tokens_cli.command("create")
@click.argument("name")
@click.argument("token_name")
def create_token(name: str, token_name: str) -> None:
    """Create an API token for the account NAME and print it once."""
    row, token = ApiToken.make(get_user(name), token_name)
    db.session.add(row)
    db.session.commit()
    click.echo(token)


def init_commands(app: Flask) -> None:
    """Register the command groups."""
    app.cli.add_command(users_cli)
    app.cli.add_command(tokens_cli)
