// Chat templates rendered with @huggingface/jinja (the engine node-llama-cpp renders them with too),
// with the few Python methods and filters real templates call that the engine lacks: a list's
// `append`, `pop`, `insert` and `extend`, a string's `format`, `min` and `max` of a list,
// `string` of a mapping (Python's repr), tuples unpacked in a for loop, and subscripts that do
// not apply giving undefined. Added once, on the
// engine's own value classes, so both this room and node-llama-cpp's wrappers see them
// (docs/decisions.md, "Reply syntax from the template").
import { Environment, Interpreter, Template } from "@huggingface/jinja";

type Value = { value: unknown; type: string; builtins?: Map<string, unknown> };
type Maker = new (value: unknown) => Value;

/** The engine's value classes, read off values it makes (it exports none of them). */
function valueClasses(): {
  Array: Maker;
  String: Maker;
  Function: Maker;
  Integer: Maker;
  Null: Maker;
  Undefined: Maker;
} {
  const env = new Environment();
  for (const [name, value] of Object.entries({ a: [], s: "", n: 1, z: null })) env.set(name, value);
  const of = (name: string): Value => env.lookupVariable(name) as unknown as Value;
  const upper = (of("s").builtins as Map<string, Value>).get("upper") as Value;
  return {
    Array: of("a").constructor as Maker,
    String: of("s").constructor as Maker,
    Integer: of("n").constructor as Maker,
    Null: of("z").constructor as Maker,
    Undefined: of("never-set").constructor as Maker,
    Function: upper.constructor as Maker,
  };
}

/** A value as Python's repr writes it: what `|string` gives a mapping or a list in a real template. */
export function pythonRepr(value: Value): string {
  switch (value.type) {
    case "StringValue":
      return `'${String(value.value).replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
    case "BooleanValue":
      return value.value ? "True" : "False";
    case "NullValue":
    case "UndefinedValue":
      return "None";
    case "ArrayValue":
    case "TupleValue":
      return `[${(value.value as Value[]).map(pythonRepr).join(", ")}]`;
    case "ObjectValue":
    case "KeywordArgumentsValue":
      return `{${[...(value.value as Map<string, Value>)].map(([k, v]) => `'${k}': ${pythonRepr(v)}`).join(", ")}}`;
    default:
      return String(value.value);
  }
}

function addListMethods(classes: ReturnType<typeof valueClasses>): void {
  const proto = classes.Array.prototype as object;
  const getter = Object.getOwnPropertyDescriptor(proto, "builtins")?.get;
  if (getter === undefined || getter.name === "compatBuiltins") return;
  const none = (): Value => new classes.Null(null);
  Object.defineProperty(proto, "builtins", {
    configurable: true,
    get: function compatBuiltins(this: Value) {
      const map = getter.call(this) as Map<string, Value>;
      if (map.has("append")) return map;
      const items = this.value as Value[];
      const fn = (body: (args: Value[]) => Value): Value => new classes.Function(body);
      /** A method that changes the list and returns None. */
      const mutator = (change: (args: Value[]) => void): Value =>
        fn((args) => {
          change(args);
          return none();
        });
      map.set(
        "append",
        mutator(([item]) => {
          if (item !== undefined) items.push(item);
        }),
      );
      map.set(
        "extend",
        mutator(([other]) => {
          items.push(...((other?.value as Value[] | undefined) ?? []));
        }),
      );
      map.set(
        "insert",
        mutator(([at, item]) => {
          if (item !== undefined) items.splice(Number(at?.value ?? 0), 0, item);
        }),
      );
      map.set(
        "pop",
        fn(([at]) => items.splice(at === undefined ? -1 : Number(at.value), 1)[0] ?? none()),
      );
      return map;
    },
  });
}

function addStringFormat(classes: ReturnType<typeof valueClasses>): void {
  const proto = classes.String.prototype as object;
  const getter = Object.getOwnPropertyDescriptor(proto, "builtins")?.get;
  if (getter === undefined || getter.name === "compatBuiltins") return;
  Object.defineProperty(proto, "builtins", {
    configurable: true,
    get: function compatBuiltins(this: Value) {
      const map = getter.call(this) as Map<string, Value>;
      if (!map.has("format")) {
        const text = String(this.value);
        map.set(
          "format",
          new classes.Function((args: Value[]) => {
            let next = 0;
            return new classes.String(text.replaceAll("{}", () => String(args[next++]?.value ?? "")));
          }),
        );
      }
      return map;
    },
  });
}

const STRING_FILTERS = new Set(["trim", "string", "lower", "upper", "title", "capitalize"]);

type ApplyFilter = (operand: Value, filter: { type: string; value?: unknown }, environment: unknown) => Value;

function addFilters(classes: ReturnType<typeof valueClasses>): void {
  const proto = Interpreter.prototype as unknown as { applyFilter: ApplyFilter & { compat?: true } };
  const original = proto.applyFilter;
  if (original.compat) return;
  const patched: ApplyFilter & { compat?: true } = function (this: unknown, operand, filter, environment) {
    if (filter.type === "Identifier") {
      // Python's Jinja prints an undefined value as empty text, so its string filters give "".
      if (operand.type === "UndefinedValue" && STRING_FILTERS.has(String(filter.value))) return new classes.String("");
      // Python's str() of None, True and False.
      if (filter.value === "string" && (operand.type === "NullValue" || operand.type === "BooleanValue"))
        return new classes.String(pythonRepr(operand));
      if (filter.value === "string" && (operand.type === "ObjectValue" || operand.type === "ArrayValue"))
        return new classes.String(pythonRepr(operand));
      if ((filter.value === "min" || filter.value === "max") && operand.type === "ArrayValue") {
        const items = operand.value as Value[];
        const numbers = items.map((item) => Number(item.value));
        if (items.length === 0) return new classes.Null(null);
        const at = numbers.indexOf(filter.value === "min" ? Math.min(...numbers) : Math.max(...numbers));
        return items[at] as Value;
      }
    }
    return original.call(this, operand, filter, environment);
  };
  patched.compat = true;
  proto.applyFilter = patched;
}

type Evaluate = (statement: { type: string } | undefined, environment: unknown) => Value;

/** Tuples as lists: the engine cannot unpack a tuple in a for loop (`for a, b in [("x", "y")]`), Python can. */
function tuplesAsLists(classes: ReturnType<typeof valueClasses>): void {
  const proto = Interpreter.prototype as unknown as { evaluate: Evaluate & { compat?: true } };
  const original = proto.evaluate;
  if (original.compat) return;
  const patched: Evaluate & { compat?: true } = function (
    this: unknown,
    statement: { type: string } | undefined,
    environment,
  ) {
    const value = original.call(this, statement, environment);
    return statement?.type === "TupleLiteral" ? new classes.Array(value.value) : value;
  };
  patched.compat = true;
  proto.evaluate = patched;
}

type EvaluateMember = (expr: unknown, environment: unknown) => Value;

/**
 * A subscript that does not apply is undefined, as Python's Jinja has it (`None[0]`, a mapping
 * indexed by a number): the engine throws there, and templates written for Python rely on it
 * (`message['content'][0]['text']` when the content is null).
 */
function lenientSubscripts(classes: ReturnType<typeof valueClasses>): void {
  const proto = Interpreter.prototype as unknown as { evaluateMemberExpression: EvaluateMember & { compat?: true } };
  const original = proto.evaluateMemberExpression;
  if (original.compat) return;
  const patched: EvaluateMember & { compat?: true } = function (this: unknown, expr, environment) {
    try {
      return original.call(this, expr, environment);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("Cannot access property with non-string"))
        return new classes.Undefined(undefined);
      throw error;
    }
  };
  patched.compat = true;
  proto.evaluateMemberExpression = patched;
}

let ready = false;

/** Adds the missing methods and filters to the engine, once per process. */
export function jinjaCompat(): void {
  if (ready) return;
  const classes = valueClasses();
  addListMethods(classes);
  addStringFormat(classes);
  addFilters(classes);
  tuplesAsLists(classes);
  lenientSubscripts(classes);
  ready = true;
}

const parsed = new Map<string, Template>();

/** Renders a chat template with `context` (messages, tools, add_generation_prompt, bos_token, …). */
export function renderTemplate(source: string, context: Record<string, unknown>): string {
  jinjaCompat();
  let template = parsed.get(source);
  if (template === undefined) {
    template = new Template(source);
    if (parsed.size >= 16) parsed.delete(parsed.keys().next().value as string);
    parsed.set(source, template);
  }
  return template.render(context);
}
