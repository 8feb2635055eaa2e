// The two checks reported but not fatal: they read the answers the other checks collected.
import { describe, isProblemJson, replayMarker } from '../answers.mjs';

export const problemJson = {
  id: 'problem-json',
  title: 'errors as application/problem+json',
  fatal: false,
  requests: 0,
  ledgerReads: 0,
  why: 'the IETF draft\'s error format (RFC 9457); idemkey hands error bodies to the page as they are, '
    + 'so a page can show their title and detail. Not needed for safety.',
  async run(ctx) {
    const sent = 'nothing more: the error answers of the checks above';
    if (ctx.errors.length === 0) return { verdict: 'unknown', sent, got: 'no error answers', note: 'nothing to judge' };
    const others = ctx.errors.filter(({ answer }) => !isProblemJson(answer));
    const got = ctx.errors.map(({ check, answer }) => `${check}: ${answer.status} ${(answer.headers['content-type'] ?? 'none').split(';')[0]}`).join(' | ');
    if (others.length > 0) {
      return { verdict: 'fail', sent, got, note: `${others.length} of ${ctx.errors.length} error answers are not application/problem+json` };
    }
    return { verdict: 'pass', sent, got, note: `all ${ctx.errors.length} error answers` };
  },
};

export const replayed = {
  id: 'replay-marker',
  title: 'Idempotent-Replayed on replays',
  fatal: false,
  requests: 0,
  ledgerReads: 0,
  why: 'idemkey reports it as `replayed`, so a page can say "already paid" rather than "paid"; '
    + 'first answers must not carry it. Not needed for safety.',
  async run(ctx) {
    const sent = 'nothing more: the replays and first answers of the checks above';
    const replays = ctx.replays.filter((a) => !a.error && a.status < 300);
    const firsts = ctx.firsts.filter((a) => !a.error && a.status < 300);
    const unmarked = replays.filter((a) => !replayMarker(a)?.on);
    const falsely = firsts.filter((a) => replayMarker(a)?.on);
    const marker = replays.map(replayMarker).find((m) => m?.on);
    const got = `${replays.length - unmarked.length} of ${replays.length} replays marked`
      + `${marker ? ` (${marker.name}: ${marker.value})` : ''}, ${falsely.length} of ${firsts.length} first answers marked`;
    if (replays.length === 0) return { verdict: 'unknown', sent, got, note: 'no replay to look at' };
    if (unmarked.length > 0) return { verdict: 'fail', sent, got, note: `replay without a marker: ${describe(unmarked[0])}` };
    if (falsely.length > 0) return { verdict: 'fail', sent, got, note: 'a first answer carries the replay marker' };
    return { verdict: 'pass', sent, got, note: marker.name === 'idempotent-replayed' ? 'the name idemkey reads'
      : `marked, but idemkey reads Idempotent-Replayed, not ${marker.name}` };
  },
};
