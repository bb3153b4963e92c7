// Imported first by a test file that runs the embedded analytics copy (docs/embedded-engine.md),
// which test/setup-file.ts turns off for the rest of the suite.
import { configSingleton } from "@/lib/config";

process.env.QUARRY_EMBEDDED_ANALYTICS = "true";
configSingleton.set(undefined);
