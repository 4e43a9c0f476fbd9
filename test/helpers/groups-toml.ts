/**
 * The `[[models]]` TOML of a model group, for tests and the bench: one builder, so a change to the
 * group's config is made in one place.
 */

/** A deployment of a model group: its provider, upstream model, tags and numeric settings. */
export interface TomlDeployment {
  provider: string;
  model: string;
  tags?: Record<string, string>;
  weight?: number;
  rpm?: number;
  tpm?: number;
  max_context_tokens?: number;
  priority?: number;
}

const NUMERIC = ["weight", "rpm", "tpm", "max_context_tokens", "priority"] as const;

/**
 * The `[[models]]` TOML of a group named `name` over `deployments`, in order; `strategy` when
 * given (else the config's default, ordered).
 */
export function groupToml(name: string, deployments: TomlDeployment[], strategy?: string): string {
  const tags = (t: Record<string, string>) =>
    `tags = { ${Object.entries(t)
      .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
      .join(", ")} }\n`;
  const numbers = (d: TomlDeployment) => NUMERIC.flatMap((k) => (d[k] === undefined ? [] : [`${k} = ${d[k]}\n`])).join("");
  const blocks = deployments.map(
    (d) =>
      `[[models.deployments]]\nprovider = ${JSON.stringify(d.provider)}\nmodel = ${JSON.stringify(d.model)}\n${d.tags ? tags(d.tags) : ""}${numbers(d)}`,
  );
  const strategyLine = strategy ? `strategy = ${JSON.stringify(strategy)}\n` : "";
  return `\n[[models]]\nname = ${JSON.stringify(name)}\n${strategyLine}${blocks.join("")}`;
}
