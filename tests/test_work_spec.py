"""Work files and inline work: accepted arithmetic, refused code, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofscope.analysis.work.expr import ExprError, evaluate
from roofscope.analysis.work.spec import base_name, evaluate_rule, parse_inline, read_work_file
from roofscope.cli.app import main
from tests.conftest import DATA

SUMMARY = DATA / "summary" / "kernels.csv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("2 * N * N * N", 2 * 64**3),
        ("(N + 1) // 2 % 5", ((64 + 1) // 2) % 5),
        ("-N + 2 ** 10", -64 + 1024),
        ("max(N, 100) + min(1, 2) + ceil(2.5) + floor(2.5)", 100 + 1 + 3 + 2),
        ("log2(N) + sqrt(16)", 6 + 4),
        ("1.5e3", 1500.0),
    ],
)  # fmt: skip
def test_arithmetic_is_evaluated(expr: str, value: float) -> None:
    assert evaluate(expr, {"N": 64}) == value


@pytest.mark.parametrize(
    ("expr", "refused"),
    [
        ("__import__('os').system('true')", "call of __import__('os').system is not"),
        ("__import__('os')", "call of __import__ is not allowed"),
        ("N.real", "attribute access is not allowed"),
        ("(1).__class__", "attribute access is not allowed"),
        ("open('x')", "call of open is not allowed"),
        ("[1][0]", "subscript is not allowed"),
        ("(lambda: 1)()", "call of lambda: 1 is not allowed"),
        ("N if N else 1", "conditional is not allowed"),
        ("'a' * 3", "constant 'a' is not a number"),
        ("_secret", "name '_secret' is not allowed"),
        ("2 ** 100000", "exponent 100,000 is too large"),
        ("1 / 0", "cannot evaluate: float division by zero"),
        ("max(*N)", "starred argument is not allowed"),
    ],
)
def test_code_is_refused(expr: str, refused: str) -> None:
    with pytest.raises(ExprError, match=None) as info:
        evaluate(expr, {"N": 64, "_secret": 1})
    assert refused in str(info.value)


def test_work_file_with_code_names_the_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "work.toml"
    path.write_text(
        '[[kernel]]\nmatch = "mat_mul"\nper = "total"\n'
        "flops = \"__import__('os').system('echo owned')\"\nbytes = 8e8\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "analyze", str(SUMMARY), "--work", str(path))
    assert (code, out) == (1, "")
    assert err.strip().splitlines() == [
        f"roofscope: error: {path}:4: [[kernel]] #1: flops \"__import__('os').system('echo "
        "owned')\": call of __import__('os').system is not allowed; only ceil, floor, log2, "
        "max, min, sqrt; use plain arithmetic"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[kernel]]\nmatch = 'a'\nflops = 'N * 2'\n", "#1: flops uses unknown name N"),
        ("[[kernel]]\nmatch = '('\n", "[[kernel]] #1: match '(' is not a regex"),
        ("[[kernel]]\nmatch = 'a'\nper = 'launch'\n", "[[kernel]] #1: per = 'launch'"),
        ("[[kernel]]\nmatch = 'a'\nbytes = { dram = 1 }\n", "#1: bytes level 'dram'"),
        ("[[kernel]]\nmatch = 'a'\nflop = 1\n", "[[kernel]] #1 has unknown key flop"),
        ("[constants]\nN = 'big'\n[[kernel]]\nmatch = 'a'\n", "must map names to numbers"),
        ("[[kernel]\n", "is not valid TOML"),
        ("[constants]\nN = 1\n", "has no [[kernel]] rules"),
    ],
)  # fmt: skip
def test_bad_work_files(tmp_path: Path, text: str, message: str) -> None:
    from roofscope.errors import InputError

    path = tmp_path / "work.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_work_file(path)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("mat_mul", "neither NAME=FLOPS:BYTES[@DTYPE] nor a work file that exists"),
        ("mat_mul=2.6e10", "expected NAME=FLOPS:BYTES[@DTYPE]"),
        ("mat_mul=lots:6e8", "flops 'lots' is not a number"),
        ("mat_mul=-1:6e8", f"flops must be a number from 0 to {10**24:,}"),
        ("mat_mul=1:inf", f"bytes must be a number from 0 to {10**24:,}"),
        ("mat_mul=1:1@fp12", "data type 'fp12' is not one of"),
    ],
)
def test_bad_inline_work(capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    code, out, err = run(capsys, "analyze", str(SUMMARY), "--work", value)
    assert (code, out) == (2, "")
    assert message in err and len(err.strip().splitlines()) == 1


def test_inline_work_matches_the_whole_or_the_base_name() -> None:
    rule = parse_inline("gemm=2:1@fp16-matrix")
    assert rule.flops == {"fp16-matrix": "2"} and rule.bytes == {"hbm": "1"}
    assert rule.matches("gemm") and rule.matches("void ns::gemm<float, 4>(float*, int)")
    assert not rule.matches("gemm_splitk(float*)") and not rule.matches("my_gemm")
    assert base_name("void ns::gemm<float, 4>(float*, int)") == "gemm"
    assert base_name("vector_add") == "vector_add"


def test_per_call_rules_multiply_by_calls_or_sum_over_launches(tmp_path: Path) -> None:
    path = tmp_path / "work.toml"
    path.write_text(
        '[constants]\nN = 10\n[[kernel]]\nmatch = "a"\nflops = "N"\n'
        '[[kernel]]\nmatch = "b"\nflops = "2 * grid_size"\nbytes = { l2 = "workgroup_size" }\n',
        encoding="utf-8",
    )
    plain, shaped = read_work_file(path)
    assert evaluate_rule(plain, [], calls=7) == ({"fp32-vector": 70.0}, {})
    launches = [
        {"grid_size": 100, "workgroup_size": 64, "dispatches": 3},
        {"grid_size": 10, "workgroup_size": 32, "dispatches": 2},
    ]
    assert evaluate_rule(shaped, launches, calls=5) == (
        {"fp32-vector": 2 * 100 * 3 + 2 * 10 * 2},
        {"l2": 64 * 3 + 32 * 2},
    )
    with pytest.raises(ExprError, match="the input gives no launch fields"):
        evaluate_rule(shaped, [], calls=5)
