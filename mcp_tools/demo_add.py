"""The `add` tool of the add-demo seed: the smallest end-to-end check that a client can call tools."""


def add(a: float, b: float) -> str:
    return f"The sum of {a:g} + {b:g} = {a + b:g}"
