import type { DeploymentConfig } from "../config";
import { globMatch } from "../offline-engine/phrase-scan";
import type { Provider, RoutedFunction } from "./types";

/** One provider to try, and the model the request asked of it (undefined: the provider's own choice). */
export interface Target {
  name: string;
  provider: Provider;
  model?: string;
  /** a model group's deployment this target is (docs/routing.md); absent for a provider named directly */
  deployment?: DeploymentConfig;
  /**
   * the model group the call named, when this deployment is one of its fallback groups' (docs/routing.md):
   * a key allowed that group is allowed the fallbacks its operator declared for it
   */
  via?: string;
}

/** Whether `provider` can serve `def` at all (what it answers for a given request is another matter). */
export function canServeWith(provider: Provider, def: RoutedFunction): boolean {
  if (provider.functions) return provider.functions.serves(def);
  if (def.kind === "image") return typeof provider.image === "function";
  return true;
}

/**
 * The ordered provider names for a function: the configured route, or the in-process engine first for
 * preferLocal functions, then every other provider in config order, then the in-process engine last; minus those
 * that cannot serve; `preferProvider` moved to the front when it is in the route (an operator's
 * route is policy, e.g. "pii-redaction stays local", so a request can reorder it but never extend it).
 */
export function orderRoute(
  def: RoutedFunction,
  providers: Map<string, Provider>,
  configured: string[] | undefined,
  preferProvider?: string,
): string[] {
  let names: string[];
  if (configured) names = [...configured];
  else {
    const all = [...providers.values()];
    const locals = all.filter((p) => p.inProcess).map((p) => p.name);
    const remote = all.filter((p) => !p.inProcess).map((p) => p.name);
    names = def.preferLocal ? [...locals, ...remote] : [...remote, ...locals];
  }
  names = [...new Set(names)].filter((n) => {
    const p = providers.get(n);
    return p !== undefined && canServeWith(p, def);
  });
  if (preferProvider && names.includes(preferProvider)) names = [preferProvider, ...names.filter((n) => n !== preferProvider)];
  return names;
}

/**
 * Splits a request's `model`: "provider/model" names both when the prefix is a provider's name
 * (model ids such as "meta-llama/llama-3-8b" keep their slash otherwise).
 */
export function parseModel(model: string | undefined, providers: Map<string, Provider>): { provider?: string; model?: string } {
  if (!model) return {};
  const slash = model.indexOf("/");
  if (slash > 0 && providers.has(model.slice(0, slash)))
    return { provider: model.slice(0, slash), model: model.slice(slash + 1) || undefined };
  if (providers.get(model)?.functionsOnly) return { provider: model };
  return { model };
}

/**
 * Targets for a function call. An explicit model applies to one provider only: the named one, else the
 * first that lists the model, else the first one in the route that is not functions-only; the others keep their
 * own models, so a fallback never sends a model name to a provider that does not know it. This is the
 * function routes' rule (their answer's `meta.provider` and `meta.model` name who answered, and the
 * offline engine is their last fallback: docs/providers.md); the /v1 APIs plan with `servingTargets`.
 */
export function planTargets(route: readonly string[], providers: Map<string, Provider>, model: string | undefined): Target[] {
  const picked = parseModel(model, providers);
  let order = route;
  let owner = picked.provider;
  if (owner && !route.includes(owner)) return order.map((name) => ({ name, provider: providers.get(name) as Provider }));
  if (owner) order = [owner, ...route.filter((n) => n !== owner)];
  else if (picked.model) {
    owner = ownerOf(route, providers, picked.model) ?? route.find((n) => providers.get(n)?.functionsOnly !== true);
    if (owner) order = [owner, ...route.filter((n) => n !== owner)];
  }
  return order.map((name) => {
    const provider = providers.get(name) as Provider;
    const explicit = name === owner && !provider.functionsOnly ? picked.model : undefined;
    return { name, provider, model: explicit };
  });
}

/** The first provider of the route that lists `model`, else the first whose patterns match it. */
function ownerOf(route: readonly string[], providers: Map<string, Provider>, model: string): string | undefined {
  return (
    route.find((n) => providers.get(n)?.listModels?.().includes(model)) ??
    route.find((n) => {
      const p = providers.get(n);
      return p !== undefined && servesModel(p, model);
    })
  );
}

/**
 * Targets for a /v1 call (docs/openai-compatible.md, "Which providers a model goes to"). A model the
 * client names is answered by that model or not at all: it goes to the providers of the route that
 * serve it (those that list it, then those whose `model_patterns` match it; `provider/model` puts
 * that provider first), each sent that id, and never to another provider's own model. No model
 * (or `provider/` without one) asks for the providers' own models: the route in its order, the
 * named provider first.
 */
export function servingTargets(route: readonly string[], providers: Map<string, Provider>, model: string | undefined): Target[] {
  const picked = parseModel(model, providers);
  const wanted = picked.model;
  if (wanted === undefined) return planTargets(route, providers, model);
  const serving = route.filter((n) => {
    const p = providers.get(n);
    return p !== undefined && servesModel(p, wanted);
  });
  const lists = (n: string) => providers.get(n)?.listModels?.().includes(wanted) === true;
  const first = picked.provider !== undefined && serving.includes(picked.provider) ? [picked.provider] : [];
  const rest = serving.filter((n) => !first.includes(n));
  const order = [...first, ...rest.filter(lists), ...rest.filter((n) => !lists(n))];
  return order.map((name) => ({ name, provider: providers.get(name) as Provider, model: wanted }));
}

/**
 * Whether `provider` serves `model`: one it names (default, per function, embeddings), or one its
 * patterns match that is not another vendor's (a default `*` takes no `gpt-*` to Anthropic).
 */
export function servesModel(provider: Provider, model: string): boolean {
  if (provider.listModels?.().includes(model)) return true;
  if (provider.othersModels?.some((p) => globMatch(p, model))) return false;
  return (provider.modelPatterns ?? []).some((p) => globMatch(p, model));
}

/** The model a target will use. */
export function targetModel(t: Target, fn: string): string {
  return t.provider.functionsOnly ? t.provider.modelFor(fn) : (t.model ?? t.provider.modelFor(fn));
}

/**
 * The model a key's allowed_models judges a target by: the model group the call named (a fallback
 * group's deployment is judged by the group it is a fallback of), else the model it will use.
 */
export function routedModel(t: Target, fn: string): string {
  return t.deployment ? (t.via ?? t.deployment.group) : targetModel(t, fn);
}
