// Imported first by a test file that runs the embedded analytics copy (docs/embedded-engine.md),
// which test/setup-file.ts turns off for the rest of the suite.
process.env.QUARRY_EMBEDDED_ANALYTICS = "true";
(globalThis as { __quarryConfig?: unknown }).__quarryConfig = undefined;
