/**
 * The `wave ui` page: a conversation view and Settings -> MCP, over the
 * local HTTP API (api.ts). Preact + htm, bundled into the binary.
 */
import { html, render } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  McpSnapshot,
  UiApproval,
  UiElicitation,
  UiMessage,
  UiServer,
  UiState,
} from '../src/ui/api-types';
import { type Api, createApi, pageToken } from './api';
import {
  actionButton,
  addPrompt,
  editPlan,
  emptyText,
  newerSnapshot,
  type PendingAction,
  relativeTime,
  type SourceTab,
  serversOfTab,
} from './logic';

type View = 'chat' | 'settings';
type SettingsTab = 'mcp' | 'general';

interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
}

/** Everything the page shows. One object, re-rendered on every change. */
interface Store {
  loaded: boolean;
  view: View;
  settingsTab: SettingsTab;
  sourceTab: SourceTab;
  input: string;
  state?: UiState;
  messages: UiMessage[];
  streaming: string;
  busy: boolean;
  approvals: UiApproval[];
  elicitations: UiElicitation[];
  mcp?: McpSnapshot;
  pending: Record<string, PendingAction>;
  confirmDelete?: UiServer;
  deleting: boolean;
  file?: { path: string; content: string; server: string };
  toasts: Toast[];
}

const api: Api = createApi(pageToken());
const store: Store = {
  loaded: false,
  view: 'chat',
  settingsTab: 'mcp',
  sourceTab: 'user',
  input: '',
  messages: [],
  streaming: '',
  busy: false,
  approvals: [],
  elicitations: [],
  pending: {},
  deleting: false,
  toasts: [],
};
const subscribers = new Set<() => void>();
let toastId = 0;

function update(change: Partial<Store>): void {
  Object.assign(store, change);
  for (const s of subscribers) s();
}

function toast(kind: Toast['kind'], text: string): void {
  const t = { id: ++toastId, kind, text };
  update({ toasts: [...store.toasts, t] });
  setTimeout(
    () => update({ toasts: store.toasts.filter((x) => x.id !== t.id) }),
    kind === 'error' ? 12_000 : 5000,
  );
}

function applySnapshot(next: McpSnapshot): void {
  // The highest version received, applied or not: hosts and tests can watch it.
  const seen = Number(document.documentElement.dataset.snapshotVersionSeen ?? 0);
  document.documentElement.dataset.snapshotVersionSeen = String(Math.max(seen, next.version));
  document.documentElement.dataset.snapshotsReceived = String(
    Number(document.documentElement.dataset.snapshotsReceived ?? 0) + 1,
  );
  const mcp = newerSnapshot(store.mcp, next);
  if (mcp !== store.mcp) update({ mcp });
}

function addMessage(m: UiMessage): void {
  if (store.messages.some((x) => x.id === m.id)) return;
  const messages = [...store.messages, m].sort((a, b) => a.id - b.id);
  update({ messages, streaming: m.role === 'assistant' ? '' : store.streaming });
}

async function loadState(): Promise<void> {
  try {
    const s = await api.state();
    update({
      loaded: true,
      state: s,
      messages: s.messages,
      streaming: s.streaming,
      busy: s.busy,
      approvals: s.approvals,
      elicitations: s.elicitations,
    });
    applySnapshot(s.mcp);
  } catch (err) {
    toast('error', (err as Error).message);
  }
}

/**
 * Settles once the event stream is open. A turn's outcome (an error above
 * all) arrives only as an event, so a message is sent only when the page
 * can hear it: typed before the stream opened, it waits for it.
 */
let markLive: () => void = () => undefined;
const live = new Promise<void>((resolve) => {
  markLive = resolve;
});

function connectEvents(): void {
  const es = api.events();
  es.addEventListener('message', (e) => addMessage(JSON.parse((e as MessageEvent).data)));
  es.addEventListener('delta', (e) =>
    update({ streaming: store.streaming + JSON.parse((e as MessageEvent).data).text }),
  );
  es.addEventListener('busy', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as { busy: boolean; error?: string; stopped?: boolean };
    update({ busy: d.busy, ...(d.busy ? {} : { streaming: '' }) });
    if (d.error) toast('error', d.error);
    if (d.stopped) toast('info', 'Stopped.');
  });
  es.addEventListener('approvals', (e) =>
    update({ approvals: JSON.parse((e as MessageEvent).data).approvals }),
  );
  es.addEventListener('elicitations', (e) =>
    update({ elicitations: JSON.parse((e as MessageEvent).data).elicitations }),
  );
  es.addEventListener('mcp', (e) => applySnapshot(JSON.parse((e as MessageEvent).data)));
  es.addEventListener('signIn', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as { server: string; ok: boolean; error?: string };
    if (store.pending[d.server] === 'sign-in') clearPending(d.server);
    if (d.ok) toast('info', `Signed in to "${d.server}".`);
    else toast('error', `Signing in to "${d.server}" failed: ${d.error ?? 'unknown error'}`);
  });
  // After a dropped stream the browser reconnects by itself; catch up on what was missed.
  es.addEventListener('open', () => {
    markLive();
    if (store.loaded) void loadState();
  });
}

// ---- actions -------------------------------------------------------------

function openMcpSettings(): void {
  update({ view: 'settings', settingsTab: 'mcp', input: '' });
  void api.servers().then(applySnapshot, (err: Error) => toast('error', err.message));
}

async function submit(): Promise<void> {
  const text = store.input.trim();
  if (text === '') return;
  if (text === '/mcp') return openMcpSettings();
  // Enter during a turn keeps the text for when the turn ends (Send is disabled then too).
  if (store.busy) return;
  update({ input: '' });
  try {
    await live;
    await api.send(text);
  } catch (err) {
    update({ input: text });
    toast('error', (err as Error).message);
  }
}

function clearPending(name: string): void {
  const pending = { ...store.pending };
  delete pending[name];
  update({ pending });
}

/**
 * Sign in: a window is opened now (while the click still allows pop-ups), then
 * sent to the authorization URL; the sign-in ends with a `signIn` event.
 */
async function signIn(s: UiServer): Promise<void> {
  update({ pending: { ...store.pending, [s.name]: 'sign-in' } });
  const win = window.open('', '_blank');
  if (win) win.opener = null;
  try {
    const { url } = await api.signIn(s.name);
    if (url === '') win?.close();
    else if (win) win.location.href = url;
    else toast('info', `Open this URL to sign in to "${s.name}": ${url}`);
  } catch (err) {
    win?.close();
    toast('error', `Signing in to "${s.name}" failed: ${(err as Error).message}`);
    clearPending(s.name);
  }
}

async function runAction(s: UiServer, action: PendingAction): Promise<void> {
  if (action === 'sign-in') return signIn(s);
  update({ pending: { ...store.pending, [s.name]: action } });
  try {
    applySnapshot(action === 'connect' ? await api.connect(s.name) : await api.disconnect(s.name));
  } catch (err) {
    toast(
      'error',
      `${action === 'connect' ? 'Connecting' : 'Disconnecting'} "${s.name}" failed: ${(err as Error).message}`,
    );
    await api.servers().then(applySnapshot, () => undefined);
  } finally {
    const pending = { ...store.pending };
    delete pending[s.name];
    update({ pending });
  }
}

async function confirmDelete(): Promise<void> {
  const s = store.confirmDelete;
  if (!s) return;
  update({ deleting: true });
  try {
    applySnapshot(await api.remove(s.name));
    update({ confirmDelete: undefined, deleting: false });
    toast('info', `Deleted "${s.name}" from ${s.file}.`);
  } catch (err) {
    update({ confirmDelete: undefined, deleting: false });
    toast('error', (err as Error).message);
  }
}

function startAdd(tab: 'user' | 'project'): void {
  update({ view: 'chat', input: addPrompt(tab, store.mcp?.project ?? ''), file: undefined });
  focusInput();
}

async function startEdit(s: UiServer): Promise<void> {
  const plan = editPlan(s);
  update({ view: 'chat', input: plan.prompt, file: undefined });
  focusInput();
  if (plan.file === undefined) return;
  try {
    const f = await api.configFile(s.name);
    update({ file: { ...f, server: s.name } });
  } catch (err) {
    toast('error', (err as Error).message);
  }
}

function focusInput(): void {
  setTimeout(() => document.querySelector<HTMLTextAreaElement>('#input')?.focus(), 0);
}

// ---- views ---------------------------------------------------------------

function ToolCall(props: { call: NonNullable<UiMessage['toolCalls']>[number]; result?: UiMessage }) {
  const { call, result } = props;
  const asking = store.approvals.some((a) => a.fullName === call.name || a.tool === call.name);
  const state = result ? (result.isError ? 'failed' : 'done') : asking ? 'waiting for approval' : 'running';
  return html`<details class="tool-call" data-testid="tool-call" data-tool=${call.name}>
    <summary><span class="tool-name">${call.name}</span> <span class=${`tool-state ${state.split(' ')[0]}`}>${state}</span></summary>
    <div class="tool-body">
      <div class="label">arguments</div>
      <pre>${JSON.stringify(call.arguments, null, 2)}</pre>
      ${result ? html`<div class="label">result</div><pre class=${result.isError ? 'error' : ''}>${result.text}</pre>` : null}
    </div>
  </details>`;
}

function Messages() {
  const results = new Map(store.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  return html`<div class="messages" data-testid="messages">
    ${
      store.messages.length === 0 && !store.busy
        ? html`<p class="hint">Ask something. Type <code>/mcp</code> to manage MCP servers.</p>`
        : null
    }
    ${store.messages
      .filter((m) => m.role !== 'tool')
      .map(
        (m) => html`<div key=${m.id} class=${`msg ${m.role}`} data-testid=${`msg-${m.role}`}>
          ${m.text ? html`<div class="text">${m.text}</div>` : null}
          ${(m.toolCalls ?? []).map((c) => html`<${ToolCall} key=${c.id} call=${c} result=${results.get(c.id)} />`)}
        </div>`,
      )}
    ${store.streaming ? html`<div class="msg assistant streaming" data-testid="streaming"><div class="text">${store.streaming}</div></div>` : null}
    ${store.approvals.map((a) => html`<${ApprovalCard} key=${a.id} a=${a} />`)}
    ${store.elicitations.map((f) => html`<${ElicitationForm} key=${f.id} f=${f} />`)}
    ${store.busy && !store.streaming && store.approvals.length === 0 && store.elicitations.length === 0 ? html`<div class="thinking">Working...</div>` : null}
  </div>`;
}

function ApprovalCard(props: { a: UiApproval }) {
  const { a } = props;
  const answer = (value: string) =>
    api.answer(a.id, value).catch((err: Error) => toast('error', err.message));
  return html`<div class="approval" role="group" aria-label=${`Approve ${a.fullName}`} data-testid="approval">
    <div class="approval-title">Allow <b>${a.fullName}</b>?</div>
    ${a.description ? html`<div class="muted">${a.description}</div>` : null}
    <pre>${JSON.stringify(a.arguments, null, 2)}</pre>
    <div class="buttons">
      <button class="primary" onClick=${() => answer('allow')}>Allow once</button>
      <button onClick=${() => answer('allow-always')}>Allow always</button>
      <button class="danger" onClick=${() => answer('deny')}>Deny</button>
    </div>
  </div>`;
}

/** A form an MCP server asks for: one input per schema property. */
function ElicitationForm(props: { f: UiElicitation }) {
  const { f } = props;
  const fields = Object.entries(f.schema.properties ?? {});
  const answer = (action: string, content?: Record<string, unknown>) =>
    api
      .answerForm(f.id, content ? { action, content } : { action })
      .catch((err: Error) => toast('error', err.message));
  const onSubmit = (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const content: Record<string, unknown> = {};
    for (const [name, field] of fields) {
      const el = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
      if (!el) continue;
      if (field.type === 'boolean') content[name] = (el as HTMLInputElement).checked;
      else if (el.value === '') continue;
      else if (field.type === 'number' || field.type === 'integer') content[name] = Number(el.value);
      else content[name] = el.value;
    }
    void answer('accept', content);
  };
  return html`<form class="approval elicitation" aria-label=${`Form from ${f.server}`} data-testid="elicitation" onSubmit=${onSubmit}>
    <div class="approval-title"><b>${f.server}</b> asks: ${f.message}</div>
    ${fields.map(([name, field]) => {
      const label = field.title ?? name;
      const required = (f.schema.required ?? []).includes(name);
      const def = field.default;
      let input: unknown;
      if (field.enum)
        input = html`<select name=${name} required=${required}>${field.enum.map((o) => html`<option value=${o} selected=${o === def}>${o}</option>`)}</select>`;
      else if (field.type === 'boolean')
        input = html`<input type="checkbox" name=${name} checked=${def === true} />`;
      else if (field.type === 'number' || field.type === 'integer')
        input = html`<input type="number" name=${name} step=${field.type === 'integer' ? '1' : 'any'} value=${def ?? ''} required=${required} />`;
      else input = html`<input type="text" name=${name} value=${def ?? ''} required=${required} />`;
      return html`<label class="field"><span>${label}${required ? ' *' : ''}</span>${input}
        ${field.description ? html`<small class="muted">${field.description}</small>` : null}</label>`;
    })}
    <div class="buttons">
      <button class="primary" type="submit">Submit</button>
      <button type="button" onClick=${() => answer('decline')}>Decline</button>
      <button type="button" class="danger" onClick=${() => answer('cancel')}>Cancel</button>
    </div>
  </form>`;
}

function Composer() {
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      void submit();
    }
  };
  return html`<div class="composer">
    <textarea id="input" aria-label="Message" placeholder="Message (Enter sends, Shift+Enter new line, /mcp opens MCP settings)"
      value=${store.input} onInput=${(e: Event) => update({ input: (e.target as HTMLTextAreaElement).value })}
      onKeyDown=${onKey} rows="3"></textarea>
    <div class="composer-buttons">
      ${
        store.busy
          ? html`<button class="danger" onClick=${() => api.stop().catch((err: Error) => toast('error', err.message))}>Stop</button>`
          : null
      }
      <button class="primary" disabled=${store.busy} onClick=${() => submit()}>Send</button>
    </div>
  </div>`;
}

function FilePanel() {
  const f = store.file;
  if (!f) return null;
  return html`<aside class="file-panel" aria-label="Config file" data-testid="file-panel">
    <div class="file-head"><code data-testid="file-path">${f.path}</code>
      <button class="link" onClick=${() => update({ file: undefined })}>Close</button></div>
    <div class="muted">Read-only. Describe the change in the message box; the agent edits the file.</div>
    <pre data-testid="file-content">${f.content}</pre>
  </aside>`;
}

function Chat() {
  return html`<div class="chat-layout">
    <main class="chat"><${Messages} /><${Composer} /></main>
    <${FilePanel} />
  </div>`;
}

function ServerRow(props: { s: UiServer; now: number }) {
  const { s, now } = props;
  const pending = store.pending[s.name];
  const button = actionButton(s, pending);
  return html`<li class="server" data-testid=${`server-${s.name}`} data-status=${s.status}>
    <div class="server-main">
      <span class="server-name">${s.name}</span>
      <span class="badge source">${s.plugin ? `plugin ${s.plugin}` : s.source}</span>
      <span class="badge" data-testid="transport">${s.transport}</span>
      <span class=${`status status-${s.status}`} data-testid="status">${s.status}</span>
    </div>
    <code class="target" data-testid="target">${s.target}</code>
    <div class="server-meta">
      <span data-testid="tools">${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}${s.fromCache ? ' (cached)' : ''}</span>
      ${
        s.lastConnectedAt !== undefined
          ? html`<span data-testid="last-connected">last connected ${relativeTime(s.lastConnectedAt, now)}${s.fromCache ? ' (cached)' : ''}</span>`
          : html`<span class="muted">never connected here</span>`
      }
    </div>
    ${s.error ? html`<div class="server-error" data-testid="server-error">${s.error}</div>` : null}
    <div class="buttons">
      ${
        button
          ? html`<button data-testid="action" disabled=${button.disabled}
            onClick=${() => button.action && runAction(s, button.action)}>${button.label}</button>`
          : null
      }
      ${
        s.source === 'user' || s.source === 'project'
          ? html`<button onClick=${() => startEdit(s)}>Edit</button>
            <button class="danger" onClick=${() => update({ confirmDelete: s })}>Delete</button>`
          : null
      }
    </div>
  </li>`;
}

const TABS: { id: SourceTab; label: string }[] = [
  { id: 'user', label: 'User MCP' },
  { id: 'project', label: 'Project MCP' },
  { id: 'plugin', label: 'Plugin MCP' },
];

function McpSettings() {
  const mcp = store.mcp;
  if (!mcp) return html`<p class="muted">Loading...</p>`;
  const tab = store.sourceTab;
  const rows = serversOfTab(mcp.servers, tab);
  const now = Date.now();
  return html`<section class="mcp" data-testid="mcp-settings" data-version=${mcp.version}>
    <div class="tabs" role="tablist">
      ${TABS.map(
        (
          t,
        ) => html`<button role="tab" aria-selected=${t.id === tab} class=${t.id === tab ? 'tab active' : 'tab'}
          onClick=${() => update({ sourceTab: t.id })}>${t.label} <span class="count">${serversOfTab(mcp.servers, t.id).length}</span></button>`,
      )}
    </div>
    ${
      tab !== 'plugin'
        ? html`<div class="tab-head"><button class="primary" onClick=${() => startAdd(tab)}>
          ${tab === 'user' ? 'Add user-level MCP server' : 'Add project-level MCP server'}</button>
          <span class="muted">${tab === 'user' ? mcp.files.user : mcp.files.project}</span></div>`
        : null
    }
    ${
      rows.length === 0
        ? html`<p class="empty" data-testid="empty">${emptyText(tab, mcp.files)}</p>`
        : html`<ul class="servers">${rows.map((s) => html`<${ServerRow} key=${s.name} s=${s} now=${now} />`)}</ul>`
    }
  </section>`;
}

function General() {
  const s = store.state;
  return html`<section class="general">
    <h2>General</h2>
    <dl><dt>Project</dt><dd><code>${s?.workdir}</code></dd><dt>Model</dt><dd>${s?.model}</dd>
      <dt>Session</dt><dd><code>${s?.sessionId}</code></dd></dl>
  </section>`;
}

function Settings() {
  return html`<div class="settings">
    <nav class="settings-nav">
      <button class="link" onClick=${() => update({ view: 'chat' })}>← Back</button>
      <button class=${store.settingsTab === 'mcp' ? 'nav active' : 'nav'} onClick=${() => update({ settingsTab: 'mcp' })}>MCP servers</button>
      <button class=${store.settingsTab === 'general' ? 'nav active' : 'nav'} onClick=${() => update({ settingsTab: 'general' })}>General</button>
    </nav>
    <div class="settings-body">${store.settingsTab === 'mcp' ? html`<${McpSettings} />` : html`<${General} />`}</div>
  </div>`;
}

function DeleteDialog() {
  const s = store.confirmDelete;
  if (!s) return null;
  return html`<div class="backdrop">
    <div class="dialog" role="dialog" aria-modal="true" aria-label="Delete MCP server">
      <h3>Delete MCP server "${s.name}"?</h3>
      <p>It will be removed from <code>${s.file}</code>. This cannot be undone.</p>
      <div class="buttons">
        <button disabled=${store.deleting} onClick=${() => update({ confirmDelete: undefined })}>Cancel</button>
        <button class="danger" disabled=${store.deleting} onClick=${() => confirmDelete()}>${store.deleting ? 'Deleting...' : 'Delete'}</button>
      </div>
    </div>
  </div>`;
}

function Toasts() {
  return html`<div class="toasts">${store.toasts.map(
    (t) =>
      html`<div key=${t.id} class=${`toast ${t.kind}`} role=${t.kind === 'error' ? 'alert' : 'status'}>${t.text}</div>`,
  )}</div>`;
}

function App() {
  const [, setTick] = useState(0);
  const rerender = () => setTick((n) => n + 1);
  const started = useRef(false);
  useEffect(() => {
    subscribers.add(rerender);
    if (!started.current) {
      started.current = true;
      void loadState().then(connectEvents);
    }
    return () => subscribers.delete(rerender);
  }, []);
  return html`<div class="app">
    <header>
      <span class="logo">wave</span>
      <button class=${store.view === 'chat' ? 'nav active' : 'nav'} onClick=${() => update({ view: 'chat' })}>Conversation</button>
      <button class=${store.view === 'settings' ? 'nav active' : 'nav'} onClick=${() => update({ view: 'settings' })}>Settings</button>
      <span class="muted right">${store.state ? `${store.state.model} · ${store.state.workdir}` : ''}</span>
    </header>
    ${store.view === 'chat' ? html`<${Chat} />` : html`<${Settings} />`}
    <${DeleteDialog} />
    <${Toasts} />
  </div>`;
}

render(html`<${App} />`, document.getElementById('app') as HTMLElement);
