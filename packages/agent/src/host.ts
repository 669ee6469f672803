/**
 * AgentHost: many agents by id over one shared pool, for hosts that run for
 * weeks (daemon, IDE bridge, chat bridge). Operations on one id run one at a
 * time; a `destroy` that arrives while that id is being reconfigured is queued
 * and carried out when the reconfigure ends, never dropped.
 */
import { McpPool, type McpPoolOptions } from '@wave/mcp-pool';
import { Agent, type AgentOptions } from './agent';
import { AgentError } from './errors';

/** Options of {@link AgentHost.create}. */
export interface AgentHostOptions {
  /** Default wave home of the agents (an agent's own `home` wins). @default $WAVE_HOME, else ~/.wave */
  home?: string;
  /** A shared pool to use; the host then never destroys it. @default a shared pool owned (and destroyed) by the host */
  pool?: McpPool;
  /**
   * Options of the host's own pool, e.g. `onElicitation` (it answers every
   * agent's servers, with the server's name). Ignored with `pool`. @default {}
   */
  poolOptions?: Omit<McpPoolOptions, 'servers' | 'shared'>;
}

/**
 * Options of one agent of a host: as `Agent.create`, without `pool` (the
 * host's) and `onElicitation` (connections are shared: give it to the host's
 * `poolOptions`).
 */
export type HostAgentOptions = Omit<AgentOptions, 'pool' | 'id' | 'onElicitation'>;

/** A queued destroy, as `pendingReclaims()` shows it. */
export interface PendingReclaim {
  id: string;
  /** Why it waits. */
  waitingFor: 'reconfigure' | 'create';
}

interface Slot {
  agent?: Agent | undefined;
  /** Operations on this id run one after the other on this chain (it never rejects). */
  chain: Promise<void>;
  /** Operations queued or running, oldest first (the first one runs). */
  ops: ('reconfigure' | 'create')[];
  /** A destroy that arrived: carried out once the operations queued before it end. */
  reclaim?: Promise<void>;
  reclaimed?: boolean;
}

/** Many agents by id over one shared pool. */
export class AgentHost {
  private readonly slots = new Map<string, Slot>();
  private closed = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly options: AgentHostOptions,
    private readonly pool: McpPool,
    private readonly ownsPool: boolean,
  ) {}

  /** Create a host. Starts nothing. */
  static create(options: AgentHostOptions = {}): AgentHost {
    if (options.pool && !options.pool.shared) {
      throw new AgentError(
        'INVALID_OPTIONS',
        'AgentHost.create: pool must be shared (McpPool.create({ shared: true })).',
      );
    }
    const pool = options.pool ?? McpPool.create({ ...(options.poolOptions ?? {}), shared: true });
    return new AgentHost(options, pool, !options.pool);
  }

  private assertOpen(what: string): void {
    if (this.closed) throw new AgentError('AGENT_DESTROYED', `The agent host was closed; cannot ${what}.`);
  }

  private agentOptions(id: string, options: HostAgentOptions): AgentOptions {
    const o: AgentOptions = { ...options, pool: this.pool, id };
    if (o.home === undefined && this.options.home !== undefined) o.home = this.options.home;
    return o;
  }

  /** Run `op` on `slot`'s chain, after every operation queued before it. */
  private enqueue<T>(slot: Slot, kind: 'create' | 'reconfigure', op: () => Promise<T>): Promise<T> {
    slot.ops.push(kind);
    const run = slot.chain.then(async () => {
      try {
        return await op();
      } finally {
        slot.ops.shift();
      }
    });
    slot.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Create the agent `id`. Rejects with `AGENT_EXISTS` when the id is taken. */
  async create(id: string, options: HostAgentOptions): Promise<Agent> {
    this.assertOpen(`create agent "${id}"`);
    if (this.slots.has(id)) {
      throw new AgentError(
        'AGENT_EXISTS',
        `An agent with id "${id}" already exists; destroy or reconfigure it.`,
      );
    }
    const slot: Slot = { chain: Promise.resolve(), ops: [] };
    this.slots.set(id, slot);
    try {
      await this.enqueue(slot, 'create', async () => {
        slot.agent = await Agent.create(this.agentOptions(id, options));
      });
    } catch (error) {
      if (this.slots.get(id) === slot && !slot.reclaim) this.slots.delete(id);
      throw error;
    }
    if (slot.reclaim || this.closed || !slot.agent) {
      throw new AgentError('AGENT_DESTROYED', `Agent "${id}" was destroyed while it was being created.`);
    }
    return slot.agent;
  }

  /** The agent `id`, if it exists (and is not being replaced). */
  get(id: string): Agent | undefined {
    const slot = this.slots.get(id);
    return slot && slot.ops.length === 0 && !slot.reclaim ? slot.agent : undefined;
  }

  /** Ids of the agents (being created or reconfigured included). */
  ids(): string[] {
    return [...this.slots.keys()];
  }

  /**
   * Replace agent `id` with one built from `options` (e.g. a workdir switch):
   * the old agent is destroyed, then a new one is created under the same id.
   * Reconfigures of one id run one after the other.
   */
  reconfigure(id: string, options: HostAgentOptions): Promise<Agent> {
    try {
      this.assertOpen(`reconfigure agent "${id}"`);
    } catch (error) {
      return Promise.reject(error);
    }
    const slot = this.slots.get(id);
    if (!slot || slot.reclaim) {
      return Promise.reject(
        new AgentError('UNKNOWN_AGENT', `No agent with id "${id}" to reconfigure; create it first.`),
      );
    }
    const gone = () =>
      new AgentError('AGENT_DESTROYED', `Agent "${id}" was destroyed while it was reconfigured.`);
    return this.enqueue(slot, 'reconfigure', async () => {
      if (slot.reclaim) throw gone();
      const old = slot.agent;
      slot.agent = undefined;
      if (old) await old.destroy();
      slot.agent = await Agent.create(this.agentOptions(id, options));
      return slot.agent;
    }).then((agent) => {
      if (slot.reclaim) throw gone();
      return agent;
    });
  }

  /**
   * Destroy agent `id` and release its connections. While `id` is being
   * created or reconfigured, the destroy is queued (see {@link pendingReclaims})
   * and carried out as soon as that ends; the promise resolves then. An
   * unknown id resolves at once.
   */
  destroy(id: string): Promise<void> {
    const slot = this.slots.get(id);
    if (!slot) return Promise.resolve();
    if (slot.reclaim) return slot.reclaim;
    slot.reclaim = slot.chain.then(async () => {
      const agent = slot.agent;
      slot.agent = undefined;
      try {
        if (agent) await agent.destroy();
      } finally {
        slot.reclaimed = true;
        if (this.slots.get(id) === slot) this.slots.delete(id);
      }
    });
    return slot.reclaim;
  }

  /** Destroys queued behind a create or reconfigure, not yet carried out. */
  pendingReclaims(): PendingReclaim[] {
    const out: PendingReclaim[] = [];
    for (const [id, slot] of this.slots) {
      const waitingFor = slot.ops[0];
      if (slot.reclaim && !slot.reclaimed && waitingFor) out.push({ id, waitingFor });
    }
    return out;
  }

  /** Destroy every agent (queued ones included) and, when the host owns it, the pool. Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.closing = (async () => {
      await Promise.allSettled([...this.slots.keys()].map((id) => this.destroy(id)));
      if (this.ownsPool) await this.pool.destroy();
    })();
    return this.closing;
  }

  /** Same as {@link close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
