// Checks every configuration variable and exits 1 with one message naming each invalid one.
// scripts/server.mjs runs it before it listens (run with tsx --conditions=react-server).
import { configurationMessage, configurationProblems } from "@/lib/config/validate";

const problems = configurationProblems(process.env);
if (problems.length > 0) {
  console.error(configurationMessage(problems));
  process.exit(1);
}
