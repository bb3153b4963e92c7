// Who listens on a TCP port, for the "port in use" message (issue 47 §1): Linux's socket tables in
// /proc/net/tcp and tcp6 give the listening socket's inode, and the process holding that socket has
// a /proc/<pid>/fd link to "socket:[inode]". Only what this process may read: another user's process
// shows its socket but not its descriptors, and then only that user is named. Elsewhere (no /proc),
// nothing is known and the caller says what it said before.
import fs from "node:fs";
import os from "node:os";

const LISTEN = "0A";

/** The inodes and owners' uids of the sockets listening on `port` (any address, IPv4 and IPv6). */
function listeningSockets(port) {
  const sockets = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text;
    try {
      text = fs.readFileSync(table, "utf8");
    } catch {
      continue;
    }
    // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …"; the address is hex "ADDR:PORT".
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== LISTEN) continue;
      if (Number.parseInt(fields[1].split(":")[1], 16) !== port) continue;
      sockets.push({ inode: fields[9], uid: Number(fields[7]) });
    }
  }
  return sockets;
}

function commandLine(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return "";
  }
}

const describe = (pid) => `pid ${pid} (${commandLine(pid) || "command line unreadable"})`;

/** ", started by pid 4242 (node scripts/start.mjs)": a supervised server's supervisor is the one to stop (it would start the server again). */
function parentOf(pid) {
  let ppid;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return "";
  }
  return ppid > 1 && commandLine(ppid) ? `, started by ${describe(ppid)}` : "";
}

function userName(uid) {
  try {
    const entry = fs.readFileSync("/etc/passwd", "utf8").split("\n").find((line) => line.split(":")[2] === String(uid));
    return entry?.split(":")[0] ?? `uid ${uid}`;
  } catch {
    return `uid ${uid}`;
  }
}

/**
 * Describes the process listening on `port`: "pid 1234 (node scripts/server.mjs), started by pid 1200 (node
 * scripts/start.mjs)", or "a process of user postgres"
 * when its descriptors cannot be read; undefined when nothing can be told.
 * @param {number} port
 * @returns {string | undefined}
 */
export function describePortHolder(port) {
  const sockets = listeningSockets(port);
  if (sockets.length === 0) return undefined;
  const wanted = new Set(sockets.map((socket) => `socket:[${socket.inode}]`));
  let pids;
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    pids = [];
  }
  const holders = [];
  for (const pid of pids) {
    let fds;
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      let target;
      try {
        target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (wanted.has(target)) {
        holders.push(`${describe(pid)}${parentOf(pid)}`);
        break;
      }
    }
  }
  if (holders.length > 0) return holders.join(", ");
  const uid = sockets[0].uid;
  return uid === os.userInfo().uid ? undefined : `a process of user ${userName(uid)}`;
}
