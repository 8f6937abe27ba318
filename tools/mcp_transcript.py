"""The example transcript of docs/mcp.md: an agent's tool calls to ``roofscope mcp`` on a
corpus profile, and the server's answers, abridged (long lists cut to their first items and
long strings to 160 characters, each cut marked with "…"; the
repository's folder written <repo>).

    python tools/mcp_transcript.py > /tmp/transcript.md
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
PROFILE = "kineto/h100_qwen1.5_0.5b_chat.json.gz"


def abridged(value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict):
        return {k: abridged(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list) and len(value) > 1:
        return [abridged(value[0], depth + 1), f"… {len(value) - 1} more"]
    if isinstance(value, list):
        return [abridged(v, depth + 1) for v in value]
    if isinstance(value, str) and len(value) > 160:
        return value[:160] + "…"
    return value


async def transcript() -> None:
    args = ["-m", "roofscope", "mcp", "--root", str(ROOT / "tests" / "data")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    async with Client(StdioServerParameters(command=sys.executable, args=args, env=env)) as c:
        top = None
        for tool, arguments in steps():
            if tool == "kernel":
                arguments["name"] = top
            result = await c.call_tool(tool, arguments)
            if result.is_error:
                print(f"**call** `{tool}` `{json.dumps(arguments)}`: tool error\n")
                said = result.content[0].text.replace(str(ROOT), "<repo>")  # type: ignore[union-attr]
                print(f"```\n{said}\n```\n")
                continue
            answer = result.structured_content or {}
            if tool == "analyze":
                top = answer["kernels"][0]["name"][:48]  # a part of the name is enough
            print(f"**call** `{tool}` `{json.dumps(arguments)}`\n")
            text = json.dumps(abridged(answer), indent=1, ensure_ascii=False)
            print(f"```json\n{text}\n```\n".replace(str(ROOT), "<repo>"))


def steps() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("analyze", {"path": PROFILE, "limit": 3}),
        ("kernel", {"path": PROFILE}),
        ("findings", {"path": PROFILE, "limit": 2}),
        ("timeline", {"path": PROFILE}),
        ("analyze", {"path": "/etc/hostname"}),
    ]


if __name__ == "__main__":
    anyio.run(transcript)
