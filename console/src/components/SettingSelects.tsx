/**
 * Settings of the JSON body that take one of a few values, each chosen in a select beside the editor: the
 * select shows the body's value and writes the one chosen into the body. Its choices are those the
 * gateway's config schema allows, and "not set", which leaves the setting out of a new body and sends it as
 * null in a change, where null removes it (a setting left out of a change is kept).
 */
import { Group, NativeSelect } from '@mantine/core';
import { useEffect, useState } from 'react';
import { errorText } from '../api';
import { settingChoices, type SettingChoices } from '../config-schema';

export interface SettingSelect {
  /** The body's member. */
  name: string;
  label: string;
}

type Row = Record<string, unknown>;

/** The body, when the text is a JSON object; the selects wait while it is not. */
function objectOf(text: string): Row | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Row)
      : undefined;
  } catch {
    return undefined;
  }
}

function useChoices(settings: SettingSelect[]) {
  const [choices, setChoices] = useState<Record<string, SettingChoices>>({});
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    Promise.all(settings.map(async ({ name }) => [name, await settingChoices(name)] as const))
      .then((found) => live && setChoices(Object.fromEntries(found)))
      .catch((err: unknown) => live && setError(`The choices could not be read: ${errorText(err)}`));
    return () => {
      live = false;
    };
  }, [settings]);
  return { choices, error };
}

export function SettingSelects({
  settings,
  text,
  creating,
  onChange,
}: {
  settings: SettingSelect[];
  text: string;
  /** A new body (a POST), rather than a change. */
  creating: boolean;
  onChange: (text: string) => void;
}) {
  const { choices, error } = useChoices(settings);
  const body = objectOf(text);

  function choose(name: string, value: string) {
    if (!body) return;
    const next = { ...body };
    if (value !== '') next[name] = value;
    else if (creating) delete next[name];
    else next[name] = null;
    onChange(JSON.stringify(next, null, 2));
  }

  return (
    <Group grow align="start">
      {settings.map(({ name, label }) => {
        const current = typeof body?.[name] === 'string' ? (body[name] as string) : '';
        const values = choices[name]?.values ?? [];
        // A value typed in the body that the schema does not allow is shown as it is: the gateway refuses it.
        const shown = current === '' || values.includes(current) ? values : [...values, current];
        return (
          <NativeSelect
            key={name}
            label={label}
            description={choices[name]?.description}
            error={error ?? (body ? undefined : 'The body is not a JSON object: correct it to choose here')}
            disabled={!body || !choices[name]}
            value={current}
            data={[{ value: '', label: 'not set' }, ...shown.map((value) => ({ value, label: value }))]}
            onChange={(event) => choose(name, event.currentTarget.value)}
          />
        );
      })}
    </Group>
  );
}
