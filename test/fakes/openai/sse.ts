// Writes a server-sent event stream the way OpenAI does (`data: <json>\n\n` … `data: [DONE]\n\n`), or
// breaks it on purpose as the behaviour asks: cut, stall, malformed line, in-band error, no [DONE].
import type { ServerResponse } from 'node:http';
import { openAIErrors } from './errors.js';
import type { FakeBehaviour } from './types.js';

const DONE = 'data: [DONE]\n\n';
const MALFORMED = 'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":"unterminated\n\n';

export interface TimerSet {
  add(timer: NodeJS.Timeout): void;
  delete(timer: NodeJS.Timeout): void;
}

/** The frames to send, in order, with the behaviour's malformed line, error event and [DONE] applied. */
export function planFrames(events: object[], behaviour: FakeBehaviour): string[] {
  const frames = events.map((e) => `data: ${JSON.stringify(e)}\n\n`);
  if (behaviour.malformedAt !== undefined) {
    const at = Math.min(Math.max(behaviour.malformedAt, 1), frames.length + 1) - 1;
    frames.splice(at, 0, MALFORMED);
  }
  if (behaviour.errorEventAfter !== undefined) {
    const kept = frames.slice(0, Math.max(0, behaviour.errorEventAfter));
    kept.push(`data: ${JSON.stringify(openAIErrors.streamInterrupted())}\n\n`);
    return kept;
  }
  if (!behaviour.noDone) frames.push(DONE);
  return frames;
}

export function writeEventStream(
  res: ServerResponse,
  frames: string[],
  behaviour: FakeBehaviour,
  timers: TimerSet,
): void {
  const cutAt = behaviour.cutAfter;
  const stallAt = behaviour.stallAfter;
  // Where the stream stops being a normal stream, if it does.
  const breakAt = Math.min(cutAt ?? Infinity, stallAt ?? Infinity);
  const gap = behaviour.chunkDelayMs ?? 0;

  const finish = (sent: number) => {
    if (sent >= frames.length) res.end();
    else if (cutAt !== undefined && sent >= cutAt) {
      // A destroyed socket mid chunked body is what the client sees when an upstream dies.
      res.socket?.destroy();
    }
    // stalled: leave the socket open; close() of the fake or the client ends it
    else if (behaviour.keepAliveMs !== undefined) {
      const timer = setInterval(() => res.write(': keep-alive\n\n'), behaviour.keepAliveMs);
      timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    }
  };

  if (gap <= 0) {
    // Fast path: everything that will be sent goes out in one write.
    const count = Math.min(frames.length, breakAt);
    if (count >= frames.length) {
      res.end(frames.join(''));
      return;
    }
    res.write(frames.slice(0, count).join(''), () => finish(count));
    return;
  }

  let sent = 0;
  const step = () => {
    if (res.destroyed || res.writableEnded) return;
    if (sent >= frames.length || sent >= breakAt) {
      finish(sent);
      return;
    }
    const frame = frames[sent++];
    res.write(frame);
    if (sent >= frames.length || sent >= breakAt) {
      // flush the last frame before ending or cutting, so the client really receives K events
      res.write('', () => finish(sent));
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      step();
    }, gap);
    timers.add(timer);
  };
  step();
}
