// Files imported `with { type: "text" }` are embedded as strings (also inside the compiled binary).
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*/standalone.js" {
  const text: string;
  export default text;
}
