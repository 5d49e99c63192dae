"""Lines of Python the tests of code features make their documents of: names, literals,
comments and layout enough for renamed and re-laid copies."""

PYTHON_LINES = (
    "x = compute(a, b)",
    "if x > 10:\n    y = 'big'",
    "for item in items:\n    total += item",
    "return {k: v for k, v in pairs}",
    "print(f'{name}: {value}')  # a comment",
    "def helper(n):\n    return n * 2",
    "values.append(3.5)",
    "while not done:\n    done = step()",
)


def python_files(count: int) -> list[str]:
    """``count`` files of 5 to 7 of the lines, each its own mix, ending in its number."""
    n = len(PYTHON_LINES)
    bodies = ("\n".join(PYTHON_LINES[(i * 3 + j) % n] for j in range(5 + i % 3)) for i in range(count))
    return [f"{body}\nr = {i}\n" for i, body in enumerate(bodies)]
