// One validation issue as a line of text, the way endpoint 2's feedback, custom endpoints'
// messages and the CLI print it: the code first, then the field, then the sentence.
import type { Issue } from './types.ts';

export const issueString = (i: Issue): string => `${i.code}: ${i.field ? `${i.field}: ` : ''}${i.message}`;
