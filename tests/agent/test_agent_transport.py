"""The transport against the real loopback HTTP server: every fault, retried or surfaced."""

from __future__ import annotations

import json
import threading
import time

import pytest

from agentpost.agent.llm import MalformedResponse, ModelRequestError, ModelUnavailable
from agentpost.agent.loopback import LoopbackServer
from agentpost.agent.transport import OpenAITransport, TransportConfig
from agentpost.errors import BudgetExceeded, InfraError, InputError
from agentpost.prices import Prices

MSGS = [{"role": "user", "content": "list the files"}]


def _transport(server: LoopbackServer, **kw) -> OpenAITransport:
    cfg = dict(
        model="loopback-m", base_url=server.url, timeout_s=0.5, backoff_s=0.01, max_retries=3
    )
    cfg.update(kw)
    return OpenAITransport(TransportConfig(**cfg))


def test_ok_call_records_usage_and_top10_logprobs_exactly_as_sent() -> None:
    reply = {"content": "I will run ls now.", "reasoning": "the user wants files"}
    with LoopbackServer([reply]) as srv:
        comp = _transport(srv).complete(MSGS)
        sent = srv.responses[0]
        req = srv.requests[0]
    assert req["logprobs"] is True and req["top_logprobs"] == 10
    assert comp.text == "I will run ls now." and comp.reasoning == "the user wants files"
    u = sent["usage"]
    assert comp.usage.input_tokens == u["prompt_tokens"] > 0
    assert comp.usage.output_tokens == u["completion_tokens"]
    assert comp.usage.reasoning_tokens == u["completion_tokens_details"]["reasoning_tokens"] > 0
    assert comp.usage.cached_tokens == 0 and comp.usage.source == "reported"
    assert comp.usage.cost_usd is None  # no prices: unknown, never 0
    content = sent["choices"][0]["logprobs"]["content"]
    assert len(comp.logprobs.tokens) == len(content) == u["completion_tokens"]
    assert comp.logprobs.chosen == [e["logprob"] for e in content]
    assert comp.logprobs.top_tokens == [[t["token"] for t in e["top_logprobs"]] for e in content]
    assert comp.logprobs.top_logprobs == [
        [t["logprob"] for t in e["top_logprobs"]] for e in content
    ]
    assert all(len(row) == 10 for row in comp.logprobs.top_logprobs)
    assert comp.attempts == 1 and comp.latency_s > 0


def test_cached_tokens_reported_on_shared_prefix() -> None:
    with LoopbackServer(["a", "b"]) as srv:
        t = _transport(srv)
        t.complete(MSGS)
        comp = t.complete(
            MSGS + [{"role": "assistant", "content": "a"}, {"role": "user", "content": "more"}]
        )
    assert 0 < comp.usage.cached_tokens < comp.usage.input_tokens
    assert t.ledger.summary()["cached_tokens"] == comp.usage.cached_tokens


@pytest.mark.parametrize(
    "fault", ["429", "500", "503", "drop", "slow", "malformed", "no_choices", "truncated"]
)
def test_retryable_faults_are_retried_and_nothing_is_lost(fault: str) -> None:
    with LoopbackServer(["first", "second"], slow_s=1.0) as srv:
        srv.fail(fault)
        t = _transport(srv, prices=Prices(input=1.0, output=2.0))
        comp = t.complete(MSGS)
        comp2 = t.complete(MSGS)
        n_requests = len(srv.requests)
    assert comp.text == "first" and comp2.text == "second"  # the faulted reply was not skipped
    assert comp.attempts == 2 and n_requests == 3
    s = t.ledger.summary()
    assert s["calls"] == 2 and s["attempts"] == 3 and s["failed_attempts"] == 1
    assert s["errors"][0]["status"] == "retryable"
    billed = 3 if fault == "no_choices" else 0  # billed though unusable: its usage counts
    assert s["output_tokens"] == comp.usage.output_tokens + comp2.usage.output_tokens + billed
    json.dumps(s)  # run.json holds it: a billed malformed reply's usage must serialise
    if fault in ("malformed", "no_choices"):
        assert s["errors"][0]["http_status"] == 200
        assert s["errors"][0]["error_type"] == "MalformedResponse"


def test_a_wrong_request_is_a_clear_error_not_retried() -> None:
    with LoopbackServer(["never"]) as srv:
        srv.fail("400")
        t = _transport(srv, prices=Prices(input=1.0, output=2.0))
        with pytest.raises(ModelRequestError, match="400"):
            t.complete(MSGS)
        assert len(srv.requests) == 1
    s = t.ledger.summary()
    assert s["attempts"] == s["failed_attempts"] == 1 and s["errors"][0]["status"] == "error"
    assert s["errors"][0]["http_status"] == 400
    assert s["input_tokens"] == 0 and s["cost_usd"] is None


def test_malformed_bodies_that_never_stop_run_out_into_model_unavailable() -> None:
    with LoopbackServer(["x"]) as srv:
        srv.fail("malformed", "no_choices", "malformed", "no_choices")
        t = _transport(srv, max_retries=3)
        with pytest.raises(ModelUnavailable, match="MalformedResponse"):
            t.complete(MSGS)
    assert isinstance(MalformedResponse("x"), InfraError)


def test_retries_run_out_into_model_unavailable() -> None:
    with LoopbackServer(["x"]) as srv:
        srv.fail("500", "429", "drop", "503")
        t = _transport(srv, max_retries=3)
        with pytest.raises(ModelUnavailable, match="after 4 attempts"):
            t.complete(MSGS)
        assert len(srv.requests) == 4
    assert t.ledger.summary()["failed_attempts"] == 4


def test_token_budget_stops_new_calls_only() -> None:
    with LoopbackServer(["one two three"] * 3) as srv:
        t = _transport(srv, max_total_tokens=5)
        t.complete(MSGS)  # a call in budget runs and is counted, even past the budget
        with pytest.raises(BudgetExceeded):
            t.complete(MSGS)
        assert len(srv.requests) == 1


def test_a_call_queued_behind_the_limit_does_not_start_once_the_budget_is_spent() -> None:
    release = threading.Event()

    def reply(body: dict) -> str:
        release.wait(5)
        return "one two three"

    with LoopbackServer(reply) as srv:
        t = _transport(srv, concurrency=1, timeout_s=5, max_total_tokens=5)
        first = threading.Thread(target=t.complete, args=(MSGS,))
        first.start()
        while not srv.requests:  # the first call holds the only slot
            time.sleep(0.005)
        errors: list[Exception] = []

        def queued() -> None:
            try:
                t.complete(MSGS)
            except BudgetExceeded as e:
                errors.append(e)

        second = threading.Thread(target=queued)
        second.start()
        time.sleep(0.05)  # the second call now waits for the slot, the budget not yet spent
        release.set()
        first.join()
        second.join()
        assert len(srv.requests) == 1 and len(errors) == 1
    assert t.ledger.summary()["calls"] == 1


def test_cost_is_null_whenever_it_is_unknown() -> None:
    with LoopbackServer(["a"]) as srv:
        t = _transport(srv)
        assert t.ledger.summary()["cost_usd"] is None  # no prices, no calls: unknown, not 0
        t.complete(MSGS)
        assert t.ledger.summary()["cost_usd"] is None
    priced = OpenAITransport(
        TransportConfig(
            model="m", base_url="http://127.0.0.1:9", prices=Prices(input=1.0, output=1.0)
        )
    )
    assert priced.ledger.summary()["cost_usd"] is None  # nothing priced yet


def test_prices_give_cost_and_cost_budget() -> None:
    prices = Prices(input=1.0, output=2.0, cached=0.5)
    with LoopbackServer(["a b c"] * 3) as srv:
        t = _transport(srv, prices=prices, max_cost_usd=1e-9)
        comp = t.complete(MSGS)
        u = comp.usage
        assert comp.usage.cost_usd == pytest.approx((u.input_tokens + 2 * u.output_tokens) / 1e6)
        with pytest.raises(BudgetExceeded, match="cost"):
            t.complete(MSGS)
    with pytest.raises(InputError, match="needs prices"):
        OpenAITransport(TransportConfig(model="m", base_url="http://127.0.0.1:9", max_cost_usd=1.0))


def test_concurrency_limit_is_respected() -> None:
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def reply(body: dict) -> str:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        return "ok"

    with LoopbackServer(reply) as srv:
        t = _transport(srv, concurrency=2, timeout_s=5)
        threads = [threading.Thread(target=t.complete, args=(MSGS,)) for _ in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert state["max"] == 2 and t.ledger.summary()["calls"] == 6


def test_tool_calls_are_parsed_and_bad_arguments_flagged() -> None:
    replies = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "ls -la"}}]},
        {"tool_calls": [{"name": "bash", "arguments": "{not json"}]},
    ]
    with LoopbackServer(replies) as srv:
        t = _transport(srv)
        tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
        good, bad = t.complete(MSGS, tools), t.complete(MSGS, tools)
        assert srv.requests[0]["tools"] == tools
    assert good.tool_calls[0].parsed == {"command": "ls -la"} and good.finish_reason == "tool_calls"
    assert bad.tool_calls[0].parsed is None and "not JSON" in bad.tool_calls[0].parse_error
    assert good.message()["tool_calls"][0]["function"]["name"] == "bash"


def test_no_logprobs_when_not_requested_and_per_call_params() -> None:
    with LoopbackServer(["plain", "json"]) as srv:
        t = _transport(srv, top_logprobs=0, temperature=0.7)
        comp = t.complete(MSGS)
        t.complete(MSGS, params={"temperature": 0.0, "response_format": {"type": "json_object"}})
        first, second = srv.requests
    assert "logprobs" not in first and first["temperature"] == 0.7
    assert second["temperature"] == 0.0 and second["response_format"] == {"type": "json_object"}
    assert comp.logprobs is None


def test_loopback_records_requests_and_reports_an_exhausted_script() -> None:
    with LoopbackServer(["only"]) as srv:
        t = _transport(srv)
        t.complete(MSGS)
        with pytest.raises(ModelRequestError, match="exhausted"):
            t.complete(MSGS)
        assert [r["messages"] for r in srv.requests] == [MSGS, MSGS] and len(srv.responses) == 1
        with pytest.raises(ValueError, match="unknown fault"):
            srv.fail("teapot")


def test_wire_shapes_token_ids_and_bad_shapes() -> None:
    from agentpost.agent.wire import parse_completion

    body = {
        "choices": [{"message": {"content": "hi"}, "token_ids": [5, 6], "finish_reason": "stop"}],
        "prompt_token_ids": [1, 2, 3],
    }
    comp = parse_completion(json.dumps(body).encode())
    assert comp.logprobs.token_ids == [5, 6] and comp.logprobs.prompt_token_ids == [1, 2, 3]
    assert comp.logprobs.top_logprobs is None and comp.usage is None  # absent, not invented
    for bad in ({"choices": []}, {"choices": [{"message": {}}], "usage": {"prompt_tokens": "x"}}):
        with pytest.raises(MalformedResponse):
            parse_completion(json.dumps(bad).encode())
