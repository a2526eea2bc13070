// Requests arriving together (edge/core/arriving.ts): each generation tells its sidecar how many
// others this app holds right behind it (GenerateRequest.arriving_with), so that the sidecar's idle
// context evaluates their prompts in one batch; a request refused before its call counts no more.
import { describe, expect, it } from "vitest";
import { type ArrivalTicket, Arriving, GATHER_MAX_TURNS, OPENED_COUNTS_MS } from "../../edge/core/arriving.js";
import { post, testApp } from "../support/app.js";

const CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };

describe("arriving_with", () => {
  it("three requests sent at once: the first says two are behind it, the next one, the last none", async () => {
    const { app, sidecar } = testApp();
    const answers = await Promise.all([
      post(app, "/v1/chat/completions", CHAT),
      post(app, "/v1/completions", { model: "m", prompt: "hi" }),
      post(app, "/v1/messages", { ...CHAT, max_tokens: 4 }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(sidecar.calls.map((c) => c.request.arrivingWith)).toEqual([2, 1, 0]);
  });

  it("a request that comes an event-loop turn after another is counted by it", async () => {
    const { app, sidecar } = testApp();
    const first = post(app, "/v1/chat/completions", CHAT);
    const second = new Promise<Response>((resolve) =>
      setImmediate(() => resolve(post(app, "/v1/completions", { model: "m", prompt: "hi" }))),
    );
    expect((await Promise.all([first, second])).map((a) => a.status)).toEqual([200, 200]);
    expect(sidecar.calls.map((c) => c.request.arrivingWith)).toEqual([1, 0]);
  });

  it("a lone request says none; one refused before its call is no longer counted", async () => {
    const { app, sidecar } = testApp();
    const [refused, sent] = await Promise.all([
      post(app, "/v1/chat/completions", { ...CHAT, temperature: "hot" }),
      post(app, "/v1/chat/completions", CHAT),
    ]);
    expect([refused.status, sent.status]).toEqual([400, 200]);
    expect((await post(app, "/v1/chat/completions", CHAT)).status).toBe(200);
    expect(sidecar.calls.map((c) => c.request.arrivingWith)).toEqual([0, 0]);
  });
});

describe("Arriving", () => {
  it("counts a ticket once, whether it is sent or leaves", async () => {
    const arriving = new Arriving();
    const [a, b, c] = [arriving.enter(), arriving.enter(), arriving.enter()];
    b.leave();
    b.leave();
    expect(await a.sent()).toBe(1);
    expect(await a.sent()).toBe(0);
    a.leave();
    expect(await c.sent()).toBe(0);
  });

  it(
    "a request that comes in the next event-loop turns is counted; the wait goes on while they keep " + "coming",
    async () => {
      const arriving = new Arriving();
      const first = arriving.enter();
      const behind: ArrivalTicket[] = [];
      // Each arrives one turn after the one before, as requests read off the sockets one by one.
      const arrive = (left: number): void => {
        behind.push(arriving.enter());
        if (left > 1) setImmediate(() => arrive(left - 1));
      };
      setImmediate(() => arrive(GATHER_MAX_TURNS - 2));
      expect(await first.sent()).toBe(GATHER_MAX_TURNS - 2);
      expect(await Promise.all(behind.map((ticket) => ticket.sent()))).toEqual(
        Array.from({ length: GATHER_MAX_TURNS - 2 }, (_, i) => GATHER_MAX_TURNS - 3 - i),
      );
    },
  );

  it("a burst's calls all go in the same event-loop turn, not each after turns of its own", async () => {
    const arriving = new Arriving();
    const others: number[] = [];
    const sendNow = async (ticket: ArrivalTicket): Promise<void> => {
      others.push(await ticket.sent());
    };
    // Three requests one turn apart, as requests read off the sockets one by one, each ready for
    // its call as it comes.
    const calls = [sendNow(arriving.enter())];
    await new Promise((resolve) => setImmediate(resolve));
    calls.push(sendNow(arriving.enter()));
    await new Promise((resolve) => setImmediate(resolve));
    calls.push(sendNow(arriving.enter()));
    await Promise.race(calls);
    // Without another turn: only microtasks run between the first call and the others.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(others).toEqual([2, 1, 0]);
    await Promise.all(calls);
  });

  it("does not wait for a request that comes many turns later, nor beyond GATHER_MAX_TURNS", async () => {
    const arriving = new Arriving();
    const lone = arriving.enter();
    // Twenty turns later: long after a lone request's two.
    const late = new Promise<ArrivalTicket>((resolve) => {
      const wait = (turns: number): unknown =>
        turns === 0 ? resolve(arriving.enter()) : setImmediate(() => wait(turns - 1));
      wait(20);
    });
    expect(await lone.sent()).toBe(0);
    expect(await (await late).sent()).toBe(0);

    // A burst that never ends: the wait stops after GATHER_MAX_TURNS turns.
    const first = arriving.enter();
    let turns = 0;
    let going = true;
    const keep = (): void => {
      if (!going) return;
      turns++;
      arriving.enter();
      setImmediate(keep);
    };
    setImmediate(keep);
    await first.sent();
    going = false;
    expect(turns).toBeLessThanOrEqual(GATHER_MAX_TURNS + 1);
    expect(turns).toBeGreaterThanOrEqual(GATHER_MAX_TURNS - 1);
  });

  it("counts a connection just opened until its request comes or it closes, for at most OPENED_COUNTS_MS", async () => {
    let now = 1000;
    const arriving = new Arriving(() => now);
    const [first, second] = [arriving.opened(), arriving.opened()];
    expect(await arriving.enter().sent()).toBe(2);
    first();
    first();
    expect(await arriving.enter().sent()).toBe(1);
    now += OPENED_COUNTS_MS;
    expect(await arriving.enter().sent()).toBe(1);
    now += 1;
    expect(await arriving.enter().sent()).toBe(0);
    second();
    arriving.opened();
    expect(await arriving.enter().sent()).toBe(1);
  });
});
