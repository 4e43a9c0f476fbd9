import type { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import type { FunctionPipeline } from "./http/pipeline";
import { knowledgeRoutes } from "./http/routes/knowledge";

/**
 * Route plugins for stored resources (knowledge bases, FAQ collections, chatbots), mounted after
 * the core routes. Each gets the app's dependencies and the function pipeline.
 */
export const resourcePlugins: ((deps: AppDeps & { pipeline: FunctionPipeline }) => Elysia)[] = [knowledgeRoutes];
