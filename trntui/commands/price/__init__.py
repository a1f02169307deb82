"""``trntui price``: fetch quotes from the AWS Price List, add manual quotes, list a project's.

``fetch`` works without a project (it prints what the price list says, and can ``--save`` the
quotes into a project); ``add`` (an instance quote), ``rate`` (a side-service rate) and ``list``
work on a project folder. ``--json`` prints one JSON
document for scripts; times are ISO 8601 in UTC, unknown values are ``null``.

The package, in the order data flows (each module imports only the ones above it):

1. ``arguments``: the argument types (a positive price, a block length, a date) and the check
   before a typed or fetched price is stored (``refuse_implausible``).
2. ``output``: quotes and rates as JSON (``quote_to_json``, ``rate_to_json``) and as text
   tables, and the download progress line.
3. ``fetch``: ``price fetch`` (``cmd_fetch``), optionally saving into a project.
4. ``project_quotes``: ``price add``, ``price rate`` and ``price list`` on a project folder.
5. ``parser``: the ``price`` subcommands and their options (``register``).

Every public name is re-exported here: import from ``trntui.commands.price``.
"""

from __future__ import annotations

from trntui.commands.price.arguments import DEFAULT_REGION, refuse_implausible
from trntui.commands.price.fetch import cmd_fetch
from trntui.commands.price.output import quote_to_json, rate_to_json
from trntui.commands.price.parser import register
from trntui.commands.price.project_quotes import cmd_add, cmd_list, cmd_rate

__all__ = [
    "DEFAULT_REGION",
    "cmd_add",
    "cmd_fetch",
    "cmd_list",
    "cmd_rate",
    "quote_to_json",
    "rate_to_json",
    "refuse_implausible",
    "register",
]
