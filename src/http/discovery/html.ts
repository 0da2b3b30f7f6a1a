// The HTML pages a node serves to people (/errors, /agent-docs): escaped text in one plain page.

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Escapes text and turns `code` spans into <code>. */
export const inlineHtml = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:15px/1.55 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}
code,pre{font-size:.9em}
pre{background:#f6f6f6;padding:.7rem;overflow-x:auto}
h2{margin-top:2rem}
:target{background:#fff7d6}
</style>
</head><body>
${body}
</body></html>`;
}
