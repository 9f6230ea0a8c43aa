/** A JSON document in CodeMirror 6, with JSON highlighting and syntax errors marked as you type. */
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { linter, lintGutter } from '@codemirror/lint';
import CodeMirror from '@uiw/react-codemirror';

const extensions = [json(), linter(jsonParseLinter()), lintGutter()];

export function JsonEditor({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <div
      data-testid="json-editor"
      style={{ border: '1px solid var(--mantine-color-gray-4)', borderRadius: 4 }}
    >
      <CodeMirror
        value={value}
        height="360px"
        extensions={extensions}
        onChange={onChange}
        basicSetup={{ foldGutter: true }}
      />
    </div>
  );
}
