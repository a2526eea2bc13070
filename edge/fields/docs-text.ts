// Whether the tables carry their documentation text (the field tables', the routes'): false in the
// Worker's bundle (wrangler.toml's `[define]`), where nothing reads it, so the text adds nothing to
// the Worker's weight; true everywhere else (the Node edge, the docs scripts, the tests). Text
// written `DOCS && …` is dropped from the bundle by the minifier, which inlines this constant; a
// module of its own, importing nothing, so that it can.
declare const __EDGE_DOCS__: boolean | undefined;

export const DOCS: boolean = typeof __EDGE_DOCS__ === "undefined" || __EDGE_DOCS__;
