// glibc's allocator settings for the server and the engines it forks, read by glibc when a process starts, so they are
// set in its environment (scripts/start.mjs, and bench/embedded-memory.ts to measure what `npm start` runs); a value
// already in the environment wins.
// MALLOC_ARENA_MAX: glibc gives each thread that allocates its own malloc arena and keeps what those arenas held after
// the threads end (extraction workers, the first boot's indexing): the idle server held ~170 MB more RSS for good with
// the default (bench/embedded-memory.ts: 496 -> 322 MB PSS idle).
// MALLOC_MMAP_THRESHOLD_: glibc serves a block of at least this size (128 KiB) from its own mapping, returned to the
// system when freed. Left to itself it raises the threshold after each such free, and the first boot's large buffers
// (demo load, copies, indexing) then stayed in the main heap for good: 382 -> 280 MB PSS for the idle web server after
// a first boot, 215 -> 181 MB for the primary engine.
export const MALLOC_ENV = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072" };
