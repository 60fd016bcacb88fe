"""Deciding what an agent run says: its output moves its task, adds artifacts, or answers.

Output counts only while it comes from the task's current run and that run is running (the run
machine, ``_states.RUNS``): anything else is late, dropped, and its run stopped. Each update is
checked against the task state table, so an agent cannot move a finished task, and the run's
end completes a task the agent left submitted or working.
"""

import attrs

from a2a_core._agent_api import ArtifactChunk, StateChange, Update, exception_status, normalize
from a2a_core._config import CoreConfig
from a2a_core._errors import InvalidAgentResponseError
from a2a_core.model._records import TaskRecord
from a2a_core.model._task import StreamEvent, TaskArtifactUpdateEvent, TaskState

from ._changes import (
    commit,
    invalid_state,
    merge,
    set_status,
    status_event,
    successor,
    with_artifacts,
)
from ._effects import Decision, StopRun
from ._inputs import AgentDone, AgentOutput, World
from ._states import RunEffect, RunTrigger, Trigger, run_step, transition

__all__ = ["agent_done", "agent_output"]

_AGENT_EVENTS = {
    TaskState.WORKING: Trigger.AGENT_WORKING,
    TaskState.INPUT_REQUIRED: Trigger.AGENT_INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED: Trigger.AGENT_AUTH_REQUIRED,
    TaskState.COMPLETED: Trigger.AGENT_COMPLETED,
    TaskState.FAILED: Trigger.AGENT_FAILED,
    TaskState.REJECTED: Trigger.AGENT_REJECTED,
    TaskState.CANCELED: Trigger.AGENT_CANCELED,
}


def _current(record: TaskRecord | None, run: int) -> bool:
    return record is not None and record.run == run and record.running


def agent_output(
    config: CoreConfig, out: AgentOutput, record: TaskRecord | None, ctx: World
) -> Decision:
    if record is None or not _current(record, out.run):
        effects, _ = run_step(record is not None and record.running, RunTrigger.LATE)
        stop = (StopRun(out.task_id, out.run),) if RunEffect.STOP_REPORTER in effects else ()
        return Decision(effects=stop, run_over=RunEffect.OVER in effects)
    updates: list[Update]
    try:
        updates = normalize(out.value, final=False)
    except InvalidAgentResponseError as error:
        updates = [exception_status(error)]
    return _apply(config, record, updates, ctx, finished=False)


def agent_done(
    config: CoreConfig, done: AgentDone, record: TaskRecord | None, ctx: World
) -> Decision:
    if record is None or not _current(record, done.run):
        return Decision()  # RunTrigger.LATE_END: dropped
    updates: list[Update]
    if done.error is not None:
        updates = [exception_status(done.error)]
    else:
        try:
            updates = normalize(done.value, final=True)
        except InvalidAgentResponseError as error:
            updates = [exception_status(error)]
    return _apply(config, record, updates, ctx, finished=True)


def _apply(
    config: CoreConfig,
    record: TaskRecord,
    updates: list[Update],
    ctx: World,
    *,
    finished: bool,
) -> Decision:
    task = record.task
    replied = record.replied
    events: list[StreamEvent] = []
    for update in updates:
        if task.status.state.terminal:
            break  # the run said more after finishing the task: it no longer counts
        match update:
            case StateChange(state=state, message=message):
                event = _AGENT_EVENTS.get(state)
                if event is None:
                    state, message = invalid_state(state)
                    event = Trigger.AGENT_FAILED
                task = set_status(task, transition(task.status.state, event), message, ctx)
                events.append(status_event(task))
            case ArtifactChunk(artifact=artifact, append=append, last_chunk=last_chunk):
                transition(task.status.state, Trigger.AGENT_ARTIFACT)  # legal while not terminal
                if not artifact.artifact_id:
                    artifact = attrs.evolve(artifact, artifact_id=ctx.new_id())
                task = with_artifacts(task, merge(task.artifacts, artifact, append))
                index = next(
                    i for i, a in enumerate(task.artifacts) if a.artifact_id == artifact.artifact_id
                )
                events.append(
                    TaskArtifactUpdateEvent(
                        task.id,
                        task.context_id,
                        artifact,
                        append=append,
                        last_chunk=last_chunk,
                        index=index,
                    )
                )
            case message:  # (a Message: the updates are of three kinds)
                state = transition(task.status.state, Trigger.AGENT_COMPLETED)
                task = set_status(task, state, message, ctx)
                replied = True
                # The reply itself is logged before the completion it causes, so that a
                # stream (from the log alone) can tell a reply from a completion with text.
                assert task.status.message is not None
                events.append(task.status.message)
                events.append(status_event(task))
    if finished and task.status.state in (TaskState.SUBMITTED, TaskState.WORKING):
        task = set_status(task, TaskState.COMPLETED, None, ctx)
        events.append(status_event(task))

    if finished:
        step = RunTrigger.END
    elif task.status.state.terminal:
        step = RunTrigger.FINISH
    else:
        step = RunTrigger.OUTPUT
    run_effects, running = run_step(record.running, step)
    over = RunEffect.OVER in run_effects
    if not events and running == record.running:
        return Decision(run_over=over)
    updated = successor(record, task, events=len(events), running=running, replied=replied)
    put, published = commit(config, record, updated, events)
    return Decision(writes=(put,), effects=published, run_over=over)
