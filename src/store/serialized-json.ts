/**
 * A JSON value already serialised by whoever built it (the log writer measures a body's size by
 * serialising it): the store writes the text as it is instead of serialising the value a second time.
 * Anything else that serialises it sees the value itself.
 */
export class SerializedJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
