/** glibc allocator settings for the server's process tree (see malloc-env.mjs). */
export const MALLOC_ENV: Readonly<Record<"MALLOC_ARENA_MAX" | "MALLOC_MMAP_THRESHOLD_", string>>;
