// Where a name is declared, as the language's scopes say: each declaration of a file is kept in the scope
// it belongs to (a block, a function, a class body, the file), and a name is resolved from the scope of its
// use outward to the first scope that declares it. The value found is used only when that scope declares
// the name once, with a value, and nothing inside the scope writes the name again; a parameter, a loop
// variable, an import or a second declaration there answers nothing, so the key is reported unknown.
import type { SyntaxNode } from './grammars.js';

/** The scopes of a language's grammar, by node type. */
export interface ScopeRules {
  /** Node types that open a scope. */
  readonly types: ReadonlySet<string>;
  /** Those of them a hoisted declaration belongs to (JavaScript's var: the function). */
  readonly functions: ReadonlySet<string>;
  /** Those whose declarations a qualified access (`Flags.CHECKOUT`) may name: the file's and a class's. */
  readonly members: ReadonlySet<string>;
  /** Scopes a function inside them does not see (Python's class body). */
  readonly classes?: ReadonlySet<string>;
  /** Scopes a lower-case (local) name is not looked up past (Ruby's def, class, module). */
  readonly localBoundaries?: ReadonlySet<string>;
}

/** A name a node declares: with its value, or null (a parameter, a loop variable, an import). */
export interface Declaration {
  readonly name: string;
  readonly value: SyntaxNode | null;
  /** Where it belongs when not in the innermost scope: the nearest function, or the scope around the node's own. */
  readonly place?: 'function' | 'outer';
}

/** A declaration as kept: its value resolves from `from`, the scope it was written in. */
export interface Bound {
  readonly value: SyntaxNode | null;
  readonly from: Scope;
  /** The declaring node: a write by the same node (Ruby's and Python's assignment) is the declaration itself. */
  readonly node: number;
}

export class Scope {
  readonly type: string;
  readonly parent: Scope | null;
  /** Created on the first declaration: most blocks declare nothing. */
  declared: Map<string, Bound[]> | null = null;

  constructor(type: string, parent: Scope | null) {
    this.type = type;
    this.parent = parent;
  }

  declare(name: string, bound: Bound): void {
    this.declared ??= new Map();
    const list = this.declared.get(name);
    if (list === undefined) this.declared.set(name, [bound]);
    else list.push(bound);
  }

  within(outer: Scope): boolean {
    for (let s: Scope | null = this; s !== null; s = s.parent) if (s === outer) return true;
    return false;
  }
}

/** A file's scopes as its walk builds them: `enter` each node in tree order, with its depth (the root's 0). */
export class ScopeTracker {
  readonly #rules: ScopeRules;
  #current: Scope;
  /** The scopes open around the current one, each with the depth of the node that opened it. */
  readonly #open: { depth: number; outer: Scope }[] = [];
  readonly #members: Scope[] = [];
  readonly #writes = new Map<string, { scope: Scope; node: number }[]>();

  constructor(rules: ScopeRules, rootType: string) {
    this.#rules = rules;
    this.#current = new Scope(rootType, null);
    this.#members.push(this.#current);
  }

  get current(): Scope {
    return this.#current;
  }

  /** A node reached at `depth`: the scopes of the nodes left behind close, and one it opens becomes current. */
  enter(type: string, depth: number): void {
    while (this.#open.length > 0 && this.#open.at(-1)!.depth >= depth) this.#current = this.#open.pop()!.outer;
    if (depth === 0 || !this.#rules.types.has(type)) return;
    const scope = new Scope(type, this.#current);
    if (this.#rules.members.has(type)) this.#members.push(scope);
    this.#open.push({ depth, outer: this.#current });
    this.#current = scope;
  }

  declare(declaration: Declaration, node: SyntaxNode): void {
    let scope = this.#current;
    if (declaration.place === 'outer') scope = scope.parent ?? scope;
    else if (declaration.place === 'function') while (scope.parent !== null && !this.#rules.functions.has(scope.type)) scope = scope.parent;
    scope.declare(declaration.name, { value: declaration.value, from: this.#current, node: node.id });
  }

  write(name: string, node: SyntaxNode): void {
    const list = this.#writes.get(name);
    const write = { scope: this.#current, node: node.id };
    if (list === undefined) this.#writes.set(name, [write]);
    else list.push(write);
  }

  /**
   * The one declaration a name used in `from` stands for, when it has a value no write overrides; undefined
   * otherwise. A qualified name (`Flags.CHECKOUT`) is looked up among the file's and its classes' members.
   */
  resolve(name: string, qualified: boolean, from: Scope): Bound | undefined {
    if (qualified) {
      const found = this.#members.flatMap((scope) => scope.declared?.get(name) ?? []);
      return found.length === 1 && found[0]!.value !== null && !this.#writes.has(name) ? found[0] : undefined;
    }
    const local = /^[a-z_]/.test(name);
    let passedFunction = false;
    for (let scope: Scope | null = from; scope !== null; scope = scope.parent) {
      if (!(passedFunction && this.#rules.classes?.has(scope.type))) {
        const declared = scope.declared?.get(name);
        if (declared !== undefined) return declared.length === 1 ? this.#unwritten(name, scope, declared[0]!) : undefined;
      }
      if (local && this.#rules.localBoundaries?.has(scope.type)) return undefined;
      if (this.#rules.functions.has(scope.type)) passedFunction = true;
    }
    return undefined;
  }

  #unwritten(name: string, scope: Scope, bound: Bound): Bound | undefined {
    if (bound.value === null) return undefined;
    const writes = this.#writes.get(name) ?? [];
    return writes.some((w) => w.node !== bound.node && w.scope.within(scope)) ? undefined : bound;
  }
}
