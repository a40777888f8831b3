"""The four model APIs the agent CLIs speak, as far as the fake model needs them.

Each wire knows: whether a request offers the agent's shell tool, how to ask for one shell command
(streamed where the CLI streams), how to end the turn with text, and where a request carries the
tool's result. Shapes were checked against what each pinned CLI sends and accepts:

- `anthropic`: Messages API, `POST /v1/messages` with `stream: true` (Claude Code);
- `responses`: OpenAI Responses API, `POST /v1/responses`, SSE (Codex; tool `exec_command`);
- `gemini`: `:generateContent`, `:streamGenerateContent?alt=sse` (Gemini CLI; `run_shell_command`);
- `chat`: OpenAI chat completions, `POST /v1/chat/completions` (Copilot CLI BYOK; tool `bash`).
"""

from __future__ import annotations

import json
from typing import Any

SSE = "text/event-stream"
JSON = "application/json"


def sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    """Server-sent events: `event:` lines where named, `data:` as compact JSON (or raw text)."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def _text_of(content: Any) -> str:
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text_of(c.get("text", c.get("content", ""))) for c in content if isinstance(c, dict)
        )
    if isinstance(content, dict):
        return json.dumps(content)
    return str(content)


class Anthropic:
    """Claude Code: the Messages API."""

    shell_tool = "Bash"

    def offers_shell(self, body: dict[str, Any]) -> bool:
        """Whether the request lists the Bash tool."""
        return any(t.get("name") == self.shell_tool for t in body.get("tools") or ())

    def shell_call(self, command: str, extra: dict[str, Any]) -> dict[str, Any]:
        """A Bash tool call (`extra`: more tool input fields)."""
        arguments = {"command": command, "description": "Run the test command", **extra}
        return {"id": "toolu_e2e_1", "name": self.shell_tool, "input": arguments}

    def tool_results(self, body: dict[str, Any]) -> list[str]:
        """The text of every `tool_result` block in the conversation."""
        found = []
        for message in body.get("messages") or ():
            content = message.get("content")
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(_text_of(block.get("content", "")))
        return found

    def _message(self, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> bytes:
        if not body.get("stream"):
            return json.dumps(
                {
                    "id": "msg_e2e",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "fake"),
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
            ).encode()
        start = {
            "id": "msg_e2e",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": body.get("model", "fake"),
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            ("message_start", {"type": "message_start", "message": start})
        ]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                opening = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                opening = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": opening},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "usage": {"output_tokens": 1},
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return sse(events)

    def tool_call(self, path: str, body: dict[str, Any], call: dict[str, Any]) -> tuple[str, bytes]:
        """Ask for the Bash call."""
        block = {"type": "tool_use", **call}
        return (SSE if body.get("stream") else JSON), self._message(body, [block], "tool_use")

    def text(self, path: str, body: dict[str, Any], text: str) -> tuple[str, bytes]:
        """End the turn with `text` (count_tokens requests get a token count)."""
        if path.split("?")[0].endswith("/count_tokens"):
            return JSON, b'{"input_tokens": 1}'
        block = {"type": "text", "text": text}
        return (SSE if body.get("stream") else JSON), self._message(body, [block], "end_turn")

    def models(self) -> dict[str, Any]:
        """`GET /v1/models`."""
        return {"data": [], "has_more": False}


class Responses:
    """Codex: the OpenAI Responses API (SSE)."""

    shell_tools = ("exec_command", "shell", "shell_command")

    def _tool_names(self, body: dict[str, Any]) -> list[str]:
        return [
            t.get("name") or (t.get("function") or {}).get("name", "")
            for t in body.get("tools") or ()
        ]

    def offers_shell(self, body: dict[str, Any]) -> bool:
        """Whether the request offers a shell tool."""
        return any(name in self.shell_tools for name in self._tool_names(body))

    def shell_call(self, command: str, extra: dict[str, Any]) -> dict[str, Any]:
        """An `exec_command` function call (`extra`: e.g. `workdir`)."""
        return {
            "type": "function_call",
            "id": "fc_e2e_1",
            "call_id": "call_e2e_1",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": command, **extra}),
        }

    def tool_results(self, body: dict[str, Any]) -> list[str]:
        """The output of every `function_call_output` input item."""
        return [
            _text_of(item.get("output", ""))
            for item in body.get("input") or ()
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]

    def _stream(self, items: list[dict[str, Any]]) -> bytes:
        response = {"id": "resp_e2e", "object": "response", "status": "in_progress", "output": []}
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            ("response.created", {"type": "response.created", "response": response})
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": item},
                )
            )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        done = {
            **response,
            "status": "completed",
            "output": items,
            "usage": {
                "input_tokens": 1,
                "output_tokens": 1,
                "total_tokens": 2,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        return sse(events)

    def tool_call(self, path: str, body: dict[str, Any], call: dict[str, Any]) -> tuple[str, bytes]:
        """Ask for the shell call."""
        return SSE, self._stream([call])

    def text(self, path: str, body: dict[str, Any], text: str) -> tuple[str, bytes]:
        """End the turn with an assistant message."""
        message = {
            "type": "message",
            "id": "msg_e2e",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        return SSE, self._stream([message])

    def models(self) -> dict[str, Any]:
        """`GET /v1/models`."""
        return {"object": "list", "data": [], "models": []}


class Gemini:
    """Gemini CLI: `generateContent` and `streamGenerateContent?alt=sse`."""

    shell_tool = "run_shell_command"

    def offers_shell(self, body: dict[str, Any]) -> bool:
        """Whether the request declares `run_shell_command`."""
        return any(
            d.get("name") == self.shell_tool
            for tool in body.get("tools") or ()
            for d in tool.get("functionDeclarations") or ()
        )

    def shell_call(self, command: str, extra: dict[str, Any]) -> dict[str, Any]:
        """A `run_shell_command` function call (`extra`: e.g. `dir_path`)."""
        arguments = {"command": command, "description": "Run the test command", **extra}
        return {"name": self.shell_tool, "args": arguments}

    def tool_results(self, body: dict[str, Any]) -> list[str]:
        """The output of every `functionResponse` part."""
        found = []
        for content in body.get("contents") or ():
            for part in content.get("parts") or ():
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if response:
                    value = response.get("response", {})
                    found.append(_text_of(value.get("output", value.get("error", value))))
        return found

    def _answer(self, path: str, parts: list[dict[str, Any]]) -> tuple[str, bytes]:
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
            "modelVersion": "gemini-fake",
        }
        if "streamGenerateContent" in path:
            return SSE, sse([(None, chunk)])
        return JSON, json.dumps(chunk).encode()

    def tool_call(self, path: str, body: dict[str, Any], call: dict[str, Any]) -> tuple[str, bytes]:
        """Ask for the shell call."""
        return self._answer(path, [{"functionCall": call}])

    def text(self, path: str, body: dict[str, Any], text: str) -> tuple[str, bytes]:
        """End the turn; a JSON-mode request (the model router) gets a JSON object."""
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            text = json.dumps(
                {
                    "complexity_reasoning": "a test",
                    "complexity_score": 10,
                    "reasoning": "a test",
                    "model_choice": "flash",
                }
            )
        return self._answer(path, [{"text": text}])

    def models(self) -> dict[str, Any]:
        """`GET /v1beta/models`."""
        return {"models": []}


class Chat:
    """Copilot CLI (BYOK): OpenAI chat completions, streamed when asked."""

    shell_tools = ("bash", "shell")

    def offers_shell(self, body: dict[str, Any]) -> bool:
        """Whether the request offers the `bash` function."""
        return any(
            (t.get("function") or {}).get("name") in self.shell_tools
            for t in body.get("tools") or ()
        )

    def shell_call(self, command: str, extra: dict[str, Any]) -> dict[str, Any]:
        """A `bash` tool call (`extra`: more arguments)."""
        arguments = {"command": command, "description": "Run the test command", **extra}
        return {
            "id": "call_e2e_1",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps(arguments)},
        }

    def tool_results(self, body: dict[str, Any]) -> list[str]:
        """The content of every `tool` message."""
        return [
            _text_of(m.get("content", ""))
            for m in body.get("messages") or ()
            if isinstance(m, dict) and m.get("role") == "tool"
        ]

    def _answer(
        self, body: dict[str, Any], message: dict[str, Any], finish: str
    ) -> tuple[str, bytes]:
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        base = {"id": "chatcmpl-e2e", "created": 0, "model": body.get("model", "fake")}
        if not body.get("stream"):
            choice = {
                "index": 0,
                "message": {"role": "assistant", **message},
                "finish_reason": finish,
            }
            return JSON, json.dumps(
                {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            ).encode()
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
        chunk = {**base, "object": "chat.completion.chunk"}
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            (
                None,
                {
                    **chunk,
                    "choices": [
                        {"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": None}
                    ],
                },
            ),
            (
                None,
                {
                    **chunk,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                    "usage": usage,
                },
            ),
            (None, "[DONE]"),
        ]
        return SSE, sse(events)

    def tool_call(self, path: str, body: dict[str, Any], call: dict[str, Any]) -> tuple[str, bytes]:
        """Ask for the bash call."""
        return self._answer(body, {"content": None, "tool_calls": [call]}, "tool_calls")

    def text(self, path: str, body: dict[str, Any], text: str) -> tuple[str, bytes]:
        """End the turn with `text`."""
        return self._answer(body, {"content": text}, "stop")

    def models(self) -> dict[str, Any]:
        """`GET /v1/models`."""
        return {"object": "list", "data": [{"id": "gpt-fake", "object": "model"}]}


WIRES: dict[str, Any] = {
    "anthropic": Anthropic(),
    "responses": Responses(),
    "gemini": Gemini(),
    "chat": Chat(),
}
