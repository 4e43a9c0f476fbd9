/**
 * The four routes every stored collection has (create, list, get, delete), from one description:
 * knowledge bases, FAQ collections and chatbots differ only in names, schema and store.
 */
import type { Static, TObject } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AuthInfo } from "../../auth/interface";
import type { Page, Paged } from "../../knowledge/interface";
import type { MaybePromise } from "../../maybe";
import { edgePlugin } from "../edge-plugin";
import { idempotentResource } from "../idempotent";
import { ok } from "../respond";
import type { RequestState } from "../state";
import { type Deps, pageOf, resourceDoc, validBody } from "./knowledge-resource";

/** What the routes read and delete of a collection: its store (knowledge/interface.ts) as it is. */
export interface CollectionStore<V> {
  list(accountId: string, page: Page): MaybePromise<Paged<V>>;
  get(accountId: string, id: string): MaybePromise<V>;
  delete(accountId: string, id: string): MaybePromise<void>;
}

export interface Collection<S extends TObject, V> {
  /** rate-limit and log name, e.g. "chatbots" */
  resource: string;
  path: string;
  /** "chatbot", "chatbots": for messages */
  noun: string;
  plural: string;
  createSchema: S;
  docs: { create: string; createDescription?: string; createCost?: string; get: string; delete: string };
  /** `call`: the calling key and the request's state, for the quota and the price of what is stored */
  create(accountId: string, body: Static<S>, call: { auth: AuthInfo; state: RequestState }): MaybePromise<V>;
  store: CollectionStore<V>;
}

type Params = Record<string, string>;
type Query = Record<string, string | undefined>;

export function collectionRoutes<S extends TObject, V>(deps: Deps, c: Collection<S, V>) {
  const R = c.resource;
  return new Elysia({ name: `${R}-collection` })
    .use(edgePlugin(deps))
    .guard({ key: { fn: R } })
    .post(
      c.path,
      async ({ request, state, auth, payload }) => {
        const body = validBody(deps, c.createSchema, payload);
        // a retry with the same Idempotency-Key gets the first answer: made and charged once
        return idempotentResource(
          { ...deps, request, state, accountId: auth.accountId, route: `POST ${c.path}`, body },
          async () => ok(state, `${c.noun} created`, await c.create(auth.accountId, body, { auth, state }), 201),
        );
      },
      {
        parse: "none",
        detail: resourceDoc(c.docs.create, {
          body: c.createSchema,
          description: c.docs.createDescription,
          cost: c.docs.createCost,
        }),
      },
    )
    .get(
      c.path,
      async ({ state, auth, query }) => ok(state, c.plural, await c.store.list(auth.accountId, pageOf(query as Query))),
      { detail: resourceDoc(`List ${c.plural} (newest first; ?limit= up to 100, default 20, &offset=)`) },
    )
    .get(
      `${c.path}/:id`,
      async ({ state, auth, params }) => ok(state, c.noun, await c.store.get(auth.accountId, (params as Params).id as string)),
      { detail: resourceDoc(c.docs.get) },
    )
    .delete(
      `${c.path}/:id`,
      async ({ state, auth, params }) => {
        const { id } = params as Params;
        await c.store.delete(auth.accountId, id as string);
        return ok(state, `${c.noun} deleted`, { id, deleted: true });
      },
      { detail: resourceDoc(c.docs.delete) },
    );
}
