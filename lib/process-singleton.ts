/** One value per process, made on first use (a database handle, the queue, a loaded configuration). */
export interface ProcessSingleton<T> {
  get(): T;
  /** The value if it was made, without making it. */
  peek(): T | undefined;
  /** Replaces the value (tests swap in a provider or storage; `undefined` makes the next `get` build anew). */
  set(value: T | undefined): void;
}

const values: Map<string, unknown> = ((globalThis as { __quarrySingletons?: Map<string, unknown> }).__quarrySingletons ??= new Map());

/**
 * The value lives on `globalThis`, not in a module variable, because Next.js bundles a module more than
 * once (route handlers, instrumentation) and the dev server reloads modules: each copy must still see the
 * same pool, queue or key. A factory that returns a failing promise is forgotten, so the next call retries.
 */
export function processSingleton<T>(name: string, factory: () => T): ProcessSingleton<T> {
  const handle: ProcessSingleton<T> = {
    get() {
      if (values.has(name)) return values.get(name) as T;
      const value = factory();
      values.set(name, value);
      if (value instanceof Promise) {
        value.catch(() => {
          if (values.get(name) === value) values.delete(name);
        });
      }
      return value;
    },
    peek: () => values.get(name) as T | undefined,
    set(value) {
      if (value === undefined) values.delete(name);
      else values.set(name, value);
    },
  };
  return handle;
}
