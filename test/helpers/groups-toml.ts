/** A deployment of a test's model group: its provider, upstream model and tags. */
export interface TomlDeployment {
  provider: string;
  model: string;
  tags?: Record<string, string>;
}

/** The `[[models]]` TOML of a model group named `name` (ordered) over `deployments`, in order. */
export function groupToml(name: string, deployments: TomlDeployment[]): string {
  const tags = (t: Record<string, string>) =>
    `tags = { ${Object.entries(t)
      .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
      .join(", ")} }\n`;
  const blocks = deployments.map(
    (d) =>
      `[[models.deployments]]\nprovider = ${JSON.stringify(d.provider)}\nmodel = ${JSON.stringify(d.model)}\n${d.tags ? tags(d.tags) : ""}`,
  );
  return `\n[[models]]\nname = ${JSON.stringify(name)}\n${blocks.join("")}`;
}
