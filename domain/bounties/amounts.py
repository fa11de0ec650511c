"""Amounts for people: the contract counts in an asset's smallest unit ("1000000" is one USDT, as payment
APIs count cents), and everything a person or a model reads shows the human value beside that integer.

`display(10_000_000, "USDT")` is "10 USDT". An asset whose decimals Code3 does not know is shown in its
smallest unit, saying so, rather than guessed.
"""

from __future__ import annotations

from decimal import Decimal

# decimals per asset symbol: how many places the smallest unit is below one whole unit
DECIMALS: dict[str, int] = {"USDT": 6, "USDC": 6, "APT": 8}
UNIT_NOTE = "in the asset's smallest unit"
EXAMPLE = '"1000000" is 1 USDT (6 decimals)'


def display(amount: int | str, asset: str) -> str:
    """The human value of `amount` smallest units of `asset`: "1 USDT", "0.5 USDT", "1234.000001 USDT";
    "7 XYZ (smallest unit)" for an asset of unknown decimals."""
    units = int(amount)
    places = DECIMALS.get(asset.upper())
    if places is None:
        return f"{units} {asset} (smallest unit)"
    value = Decimal(units).scaleb(-places)
    text = f"{value:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {asset}"


def with_units(amount: int | str, asset: str) -> str:
    """Both readings, for a line a person reads: "10 USDT (10000000 smallest units)"."""
    shown = display(amount, asset)
    if asset.upper() not in DECIMALS:
        return shown
    units = int(amount)
    return f"{shown} ({units} smallest unit{'' if units == 1 else 's'})"
