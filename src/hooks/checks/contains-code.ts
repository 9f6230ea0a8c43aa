/**
 * `default.containsCode` {format}: passes when the text holds a fenced code block (```lang) in the format, as
 * in the seed: the block's language tag decides (`py` and `python` are Python, `sh`/`bash` Shell …); an
 * untagged block names no format. Pair it with `not: true` to refuse answers carrying, say, SQL.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';
import { fencedBlocks } from './fenced-blocks.js';

export const CODE_FORMATS = [
  'SQL',
  'Python',
  'TypeScript',
  'JavaScript',
  'Java',
  'C#',
  'C++',
  'C',
  'Ruby',
  'PHP',
  'Swift',
  'Kotlin',
  'Go',
  'Rust',
  'Scala',
  'R',
  'Perl',
  'Shell',
  'HTML',
  'CSS',
  'XML',
  'JSON',
  'YAML',
  'Markdown',
  'Dockerfile',
] as const;
type CodeFormat = (typeof CODE_FORMATS)[number];

/** Language tags (lower-cased) as Markdown writers use them, beside each format's own name. */
const TAGS: Record<string, CodeFormat> = {
  ...Object.fromEntries(CODE_FORMATS.map((format) => [format.toLowerCase(), format])),
  py: 'Python',
  python3: 'Python',
  ts: 'TypeScript',
  tsx: 'TypeScript',
  js: 'JavaScript',
  jsx: 'JavaScript',
  node: 'JavaScript',
  cs: 'C#',
  csharp: 'C#',
  cpp: 'C++',
  cxx: 'C++',
  h: 'C',
  rb: 'Ruby',
  kt: 'Kotlin',
  golang: 'Go',
  rs: 'Rust',
  pl: 'Perl',
  sh: 'Shell',
  bash: 'Shell',
  zsh: 'Shell',
  console: 'Shell',
  htm: 'HTML',
  yml: 'YAML',
  md: 'Markdown',
  docker: 'Dockerfile',
  postgresql: 'SQL',
  mysql: 'SQL',
};

export const containsCode = defineCheck({
  id: 'containsCode',
  parameters: Type.Object(
    { format: Type.Union(CODE_FORMATS.map((format) => Type.Literal(format))) },
    { additionalProperties: false },
  ),
  run(ctx, { format }) {
    const found = new Set<string>();
    for (const block of fencedBlocks(checkedText(ctx))) {
      const tag = block.language.toLowerCase();
      if (tag !== '') found.add(TAGS[tag] ?? tag);
    }
    const verdict = found.has(format);
    return {
      verdict,
      explanation: verdict ? `The text holds ${format} code.` : `The text holds no ${format} code block.`,
      data: { format, found: [...found] },
    };
  },
});
