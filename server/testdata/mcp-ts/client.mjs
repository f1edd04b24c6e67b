// The cross-implementation check of issue 16: the official TypeScript MCP
// SDK's client spawns `ssh ... mcp` over stdio, as an MCP client configured
// with {"command": "ssh", "args": [...]} does. server/mcp_ts_test.go runs it:
//
//   node client.mjs agent|person SSH_ARG...
//
// agent: initialize, list tools (no approve/reject), launch a dry run (held
// before planning), print "HELD <id>" and wait through resources/updated
// until a person released it and it succeeded, read its masked log, then
// launch an apply: held before planning, and no tool releases it.
// person: the same tools, and no approve either.
// Each finding is printed as one line "OK ..." ; a failure exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...sshArgs] = process.argv.slice(2);
const fail = (msg) => { console.log("FAIL " + msg); process.exit(1); };
const ok = (msg) => console.log("OK " + msg);

const client = new Client({ name: "switchtender-ts-check", version: "1" });
const updates = [];
let wake = () => {};
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); wake(); });
const transport = new StdioClientTransport({ command: "ssh", args: sshArgs, stderr: "inherit" });
await client.connect(transport);
ok(`initialize ${client.getServerVersion().name}`);

const tools = (await client.listTools()).tools.map((t) => t.name).sort();
if (tools.some((n) => /approve|reject|release/.test(n))) fail("a tool releases runs: " + tools);
ok("tools " + tools.join(","));

// call calls a tool that must succeed (the SDK validates its structured
// content against the tool's output schema) and returns the content.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) fail(`${name} refused: ${res.content?.[0]?.text}`);
  if (!res.structuredContent) fail(`${name} has no structured content`);
  return res.structuredContent;
}

// refused calls a tool that must fail (a tool error or a protocol error).
async function refused(name, args) {
  try {
    const res = await client.callTool({ name, arguments: args });
    if (!res.isError) fail(`${name} was accepted`);
    return res.content?.[0]?.text ?? "";
  } catch (e) {
    return String(e.message ?? e);
  }
}

// waitUpdate resolves at the next resources/updated for uri.
async function waitUpdate(uri, ms) {
  const deadline = Date.now() + ms;
  while (!updates.includes(uri)) {
    if (Date.now() > deadline) fail("no resources/updated for " + uri);
    await new Promise((r) => { wake = r; setTimeout(r, 500); });
  }
  updates.length = 0;
}

if (mode === "agent") {
  let run = await call("launch", { template: "network", kind: "plan", answers: { region: "eu-west-1" } });
  if (run.status !== "awaiting_approval" || run.holds?.[0]?.rule !== "agent") fail("dry run not held before planning: " + JSON.stringify(run));
  await client.subscribeResource({ uri: `run://${run.id}` });
  console.log(`HELD ${run.id}`);
  while (run.status !== "succeeded") {
    await waitUpdate(`run://${run.id}`, 120000);
    run = await call("show_run", { run: run.id });
    if (["failed", "cancelled", "rejected", "stale", "refused", "interrupted"].includes(run.status)) fail("dry run ended " + run.status);
  }
  ok(`notified: run ${run.id} ${run.status}`);
  const log = await call("read_log", { run: run.id, offset: 0 });
  if (!log.text.includes("vpc-eu-west-1") || !log.finished) fail("log: " + JSON.stringify(log));
  ok(`log ${log.next_offset} bytes`);
  const apply = await call("launch", { template: "network", answers: { region: "eu-west-1" } });
  if (apply.status !== "awaiting_approval" || apply.proposal?.stage !== "request") fail("apply not held: " + JSON.stringify(apply));
  for (const name of ["approve", "reject"]) await refused(name, { run: apply.id, digest: apply.proposal.digest });
  await refused("rerun", { run: apply.id });
  const after = await call("show_run", { run: apply.id });
  if (after.status !== "awaiting_approval" || (after.approvals ?? []).length !== 0) fail("apply moved: " + JSON.stringify(after));
  ok(`apply ${apply.id} held before planning; no tool released it`);
} else if (mode === "person") {
  const runs = await call("list_runs", {});
  const held = runs.runs.find((r) => r.status === "awaiting_approval");
  if (!held) fail("no held run to try");
  const msg = await refused("approve", { run: held.id, digest: held.proposal.digest });
  const still = await call("show_run", { run: held.id });
  if (still.status !== "awaiting_approval") fail("held run moved");
  ok(`person cannot approve over MCP: ${msg.split("\n")[0]}`);
} else {
  fail("mode must be agent or person");
}
await client.close();
ok("done");
