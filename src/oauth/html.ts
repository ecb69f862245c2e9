// HTML for the pages the server renders itself (sign-in, consent, device code, account): a template tag that
// escapes every value it is given (app names come from operators, logins from users, codes from the URL), and
// the layout every page shares. The pages carry no script, and work without one.

/** Markup that is already safe: written by this module's templates, never taken from a value. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Value = Html | string | number | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** A template whose values are escaped, unless they are Html themselves. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(text);
}

/** A time as its ISO form in a time element, shown in UTC: the pages have no script to show local time. */
export function when(ms: number | null, never = 'not yet'): Html {
  if (ms === null) return html`${never}`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** Where the pages' one stylesheet is served. */
export const STYLESHEET_PATH = '/oauth/pages.css';

/** A whole page: its title is also its one h1. */
export function page(title: string, main: Html): string {
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · chessport</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<header><p class="brand">chessport</p></header>
<main>
<h1>${title}</h1>
${main}
</main>
</body>
</html>
`}`;
}

export const STYLESHEET = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0 auto; max-width: 34rem; padding: 1rem; }
.brand { font-weight: 700; letter-spacing: .04em; margin: 0; }
label { display: block; font-weight: 600; }
input[type=text], input[type=password] { box-sizing: border-box; font: inherit; padding: .5rem; width: 100%; }
button { font: inherit; margin: .25rem .5rem .25rem 0; padding: .5rem 1rem; }
:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
.error { border-left: 4px solid #c5221f; padding-left: .75rem; }
.notice { border-left: 4px solid #188038; padding-left: .75rem; }
.code { font-family: ui-monospace, monospace; font-size: 1.5rem; letter-spacing: .1em; }
.grant { border-top: 1px solid #8884; padding: .5rem 0; }
.grant h3 { margin: .25rem 0; }
nav ul { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; margin: 0; padding: 0; }
input[type=url], input[type=number], textarea { box-sizing: border-box; font: inherit; padding: .5rem; width: 100%; }
fieldset { border: 1px solid #8886; margin: 0 0 1rem; }
.check { display: inline; font-weight: 400; }
.secret { font-family: ui-monospace, monospace; overflow-wrap: anywhere; padding: .25rem; border: 1px dashed #8888; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { border-bottom: 1px solid #8884; padding: .25rem .5rem; text-align: left; vertical-align: top; }
dt { font-weight: 600; }
dd { margin: 0 0 .5rem; overflow-wrap: anywhere; }
.inline { display: inline; }
`.trimStart();
