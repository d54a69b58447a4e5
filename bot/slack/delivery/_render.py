"""Post a run's stream in its Slack thread: streamed text, approval cards, questions."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from agents import (
    AgentStream,
    PendingToolCall,
    ToolCallGrantedChunk,
    ToolCallSuspendedChunk,
    fingerprint,
)
from agents.errors import AgentError, ModelError
from bot.ops._outage import Service, unavailable
from bot.slack._services import Services
from bot.slack.blocks._blocks import (
    CardView,
    answer_text,
    answered_question,
    as_dicts,
    question_blocks,
    question_fallback,
)
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks.standing._grant_blocks import granted_fallback, granted_line
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._claimed import claimed_detail
from bot.slack.delivery._outbox import post_owed
from bot.slack.delivery._streamer import ReplyStreamer
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery.batch._cards import post_step_cards
from bot.slack.delivery.sending._fence import Superseded, fenced
from bot.slack.surfaces._surface import RunSurface
from storage import utcnow

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Posted:
    """What one turn posted in its thread."""

    messages: int = 0
    """How many messages it posted (text replies, cards, questions, failures)."""
    last_reply: tuple[str, str] | None = None
    """``(ts, text)`` of its plain text answer when that is the last message it posted."""
    abandoned: bool = False
    """Another instance took the run over: nothing more is posted for it here."""


async def post_run(
    services: Services,
    stream: AgentStream,
    thread: SlackThread,
    *,
    answered_by: str | None = None,
    answer: str | None = None,
    owed: bool = False,
) -> Posted:
    """Consume a run's ``full_stream`` and show it in ``thread``; returns what it posted.

    A run abandoned by this process (``finish_reason "abandoned"``: another instance took its
    call over) ends with no further chunk, and nothing more is posted for it: neither an answer
    nor a failure (the new owner posts the call's one outcome).

    ``answered_by``: the user whose thread reply this run answers; a question it resumes loses
    its "Provide details" button and shows the answer the tool received and the reply it came
    from (``answer``).
    ``owed``: the run goes on after a decided call, so its answer is the call's outcome in
    the thread: posted whole, through ``post_owed`` (kept first: a crash cannot lose it);
    streamed in an assistant thread (the stream's message is kept by ``StreamedAnswer``).

    Every write goes through one client fenced by the run's leases (``fenced``): once another
    instance took the run's work over, nothing more is sent from here (``Superseded``), and
    the run counts as abandoned.
    """
    services = fenced(services, stream)
    try:
        return await _post_run(services, stream, thread, answered_by, answer, owed=owed)
    except Superseded as exc:
        logger.info("run %s was taken over: %s", stream.run_id, exc)
        return Posted(abandoned=True)


async def _post_run(
    services: Services,
    stream: AgentStream,
    thread: SlackThread,
    answered_by: str | None,
    answer: str | None,
    *,
    owed: bool,
) -> Posted:
    surface = await RunSurface.open(services, thread, stream.run_id)
    streamer = surface.writer
    owed = owed and isinstance(streamer, ReplyStreamer)  # a stream keeps its own message
    count, text = 0, ""
    last: tuple[str, str] | None = None

    gated: list[PendingToolCall] = []  # approvals announced together: one step's calls
    gated_run = stream.run_id

    async def finish_text() -> None:
        nonlocal count, text, last
        if owed:
            ts = None
            if text.strip():
                ts = await post_owed(
                    services,
                    channel=thread.channel,
                    thread_ts=thread.thread_ts,
                    text=answer_text(text),
                )
        else:
            ts = await streamer.finish()
        if ts is not None:
            count, last = count + 1, (ts, text)
        text = ""

    async def post_gated() -> None:
        nonlocal count, last
        if gated:
            await finish_text()  # the answer so far ends above the cards
            count += await post_step_cards(services, thread, gated_run, list(gated))
            last = None
            gated.clear()

    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":  # its task card ends in the message so far
            gated_run = chunk.run_id
            gated.append(chunk.pending_call())
            await surface.follow(chunk)
            continue
        await post_gated()
        if chunk.type == "text-delta":
            text += chunk.text
            if not owed:
                await streamer.append(chunk.text)
        elif chunk.type == "tool-call-granted":
            await finish_text()
            await _post_granted(services, thread, chunk)
            count, last = count + 1, None
        elif chunk.type == "tool-call-suspended":
            await surface.follow(chunk)  # its task card ends in the message so far
            await finish_text()
            await _post_question(services, thread, chunk)
            count, last = count + 1, None
            continue
        elif chunk.type == "tool-call-resumed" and chunk.kind == "suspension" and answered_by:
            await _mark_answered(services, chunk.run_id, chunk.tool_call_id, answered_by, answer)
        await surface.follow(chunk)
    result = await stream.result()
    if result.finish_reason == "abandoned":  # taken over: the new owner posts the one outcome
        logger.info("run %s abandoned here: another instance took its call over", result.run_id)
        return Posted(messages=count, last_reply=last, abandoned=True)
    await finish_text()
    await post_gated()
    if result.finish_reason != "suspended":
        await surface.status.answered()
    if result.finish_reason == "error":
        await _report_failure(services, thread, result.error, f"run {result.run_id}")
        count, last = count + 1, None
    elif result.finish_reason != "suspended":
        services.outages.up("model")
    return Posted(messages=count, last_reply=last)


async def _post_granted(
    services: Services, thread: SlackThread, granted: ToolCallGrantedChunk
) -> None:
    """A call a standing grant approved: one compact line with Revoke, instead of a card."""
    await services.client.chat_postMessage(
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        text=granted_fallback(granted),
        blocks=as_dicts(granted_line(granted)),
    )


async def _post_question(
    services: Services, thread: SlackThread, question: ToolCallSuspendedChunk
) -> None:
    """Post a tool's question in the thread and remember where (a card record, audited as
    ``presented``)."""
    posted = await services.client.chat_postMessage(
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        text=question_fallback(question.tool_name, question.suspend_payload),
        blocks=as_dicts(
            question_blocks(question.tool_name, question.suspend_payload, _provide_ref(question))
        ),
    )
    view = CardView(
        ref=ApprovalRef(
            run_id=question.run_id,
            tool_call_id=question.tool_call_id,
            fingerprint=fingerprint(question.tool_name, question.args),
        ),
        tool_name=question.tool_name,
        args=question.args,
        requester=thread.requester,
        agent_path=tuple(question.agent_path),
    )
    shown = PostedCard(
        view=view,
        channel=str(posted.get("channel") or thread.channel),
        ts=str(posted["ts"]),
        thread_ts=thread.thread_ts,
        team=thread.team,
    )
    await services.cards.record(
        shown,
        thread_id=thread.thread_id,
        agent_id=services.agent.id,
        question=question.suspend_payload or {},
    )


async def _mark_answered(
    services: Services, run_id: str, tool_call_id: str, by: str, reply: str | None
) -> None:
    """The question a thread reply answered: no button, the answer the tool received (as its
    claim recorded it), the reply it came from, who answered and when."""
    shown = await services.cards.find(run_id, tool_call_id)
    if shown is None or shown.question is None:
        return
    data = await claimed_detail(services.storage, run_id, tool_call_id, "resumed", "resume_data")
    try:
        await services.client.chat_update(
            channel=shown.channel,
            ts=shown.ts,
            text=question_fallback(shown.view.tool_name, shown.question),
            blocks=as_dicts(
                answered_question(
                    shown.view.tool_name, shown.question, by, utcnow(), data, reply=reply
                )
            ),
        )
    except SlackApiError as exc:
        logger.warning("could not update question %s: %s", shown.ts, exc.response.get("error"))


def _provide_ref(question: ToolCallSuspendedChunk) -> ApprovalRef | None:
    """What the "Provide details" button carries; None when there is no form to show."""
    if not question.resume_schema:
        return None
    return ApprovalRef(
        run_id=question.run_id,
        tool_call_id=question.tool_call_id,
        fingerprint=fingerprint(question.tool_name, question.args),
    )


@contextlib.asynccontextmanager
async def reporting_failures(services: Services, thread: SlackThread) -> AsyncIterator[None]:
    """Log a failure of the enclosed work and tell the thread, instead of going silent (a
    run another instance took over is left to it: nothing is told from here)."""
    try:
        yield
    except Superseded as exc:
        logger.info("%s", exc)
    except Exception as exc:
        with contextlib.suppress(Exception):
            await _report_failure(services, thread, exc, f"work in {thread.thread_id}")


async def _report_failure(
    services: Services, thread: SlackThread, error: BaseException | None, what: str
) -> None:
    """Tell the thread why nothing came, in one line of log:

    - a model error with something to fix (``ModelError.hint``, e.g. no API key): that
      sentence, and a warning without traceback;
    - an outage (storage, Redis, Slack, the model API): what is down, logged once per outage;
    - anything else: the error code, and its traceback in the log (a bug to look at).
    """
    service = None if error is None else unavailable(error)
    if isinstance(error, ModelError) and error.hint and service is None:
        logger.warning("%s: the model could not answer: %s", what, error)
        await _post_text(services, thread, msg.MODEL_REFUSED.format(hint=error.hint))
        return
    code = _code(error)
    if service is None:
        logger.error("%s failed: %s", what, code, exc_info=error)
    else:
        assert error is not None
        services.outages.down(service, error)
        logger.info("%s failed: %s", what, code)
    await _post_failure(services, thread, code, service)


def _code(error: BaseException | None) -> str:
    if isinstance(error, AgentError):
        return error.code
    return "INTERNAL_ERROR" if error is None else type(error).__name__


async def _post_failure(
    services: Services, thread: SlackThread, code: str, service: Service | None = None
) -> None:
    text = msg.RUN_FAILED.format(code=code) if service is None else msg.UNAVAILABLE[service]
    await _post_text(services, thread, text)


async def _post_text(services: Services, thread: SlackThread, text: str) -> None:
    await services.client.chat_postMessage(
        channel=thread.channel, thread_ts=thread.thread_ts, text=text
    )
