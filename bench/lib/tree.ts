/**
 * Another commit of this repository checked out beside it, for A/B scenarios that compare two trees
 * in one run (the cost of a change that has no switch, such as tracing's hooks when tracing is unset).
 * The checkout is a detached `git worktree` in a temp dir that uses this checkout's node_modules;
 * `remove()` takes the worktree and its temp dir away.
 */
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./proc";

export interface Tree {
  dir: string;
  commit: string;
  remove(): void;
}

function git(args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString().trim()}`);
  return r.stdout.toString().trim();
}

export function checkoutTree(ref: string): Tree {
  const commit = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  const parent = mkdtempSync(join(tmpdir(), "textai-tree-"));
  const dir = join(parent, commit.slice(0, 7));
  git(["worktree", "add", "--detach", "--quiet", dir, commit]);
  if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return {
    dir,
    commit,
    remove() {
      try {
        git(["worktree", "remove", "--force", dir]);
      } catch {
        // already gone
      }
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
