import type { Command as Commander } from 'commander';
import { Argument } from 'commander';

/** The words that may come next after `words`: subcommands of the deepest command named, then its options. */
export function completions(program: Commander, words: readonly string[]): string[] {
  let command = program;
  for (const word of words) {
    const next = command.commands.find((c) => c.name() === word);
    if (!next) break;
    command = next;
  }
  const subcommands = command.commands.map((c) => c.name()).filter((n) => !n.startsWith('__'));
  const options = [...command.options, ...program.options].map((o) => o.long).filter((o): o is string => o !== undefined);
  return [...subcommands, ...options, '--help'];
}

const bash = `# corral bash completion: eval "$(corral completion bash)"
_corral() {
  local words=("\${COMP_WORDS[@]:1:COMP_CWORD-1}")
  COMPREPLY=($(compgen -W "$(corral __complete "\${words[@]}" 2>/dev/null)" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _corral corral
`;

const zsh = `# corral zsh completion: eval "$(corral completion zsh)"
_corral() {
  local -a options
  options=(\${(f)"$(corral __complete \${words[2,CURRENT-1]} 2>/dev/null)"})
  compadd -- $options
}
compdef _corral corral
`;

export function registerCompletion(program: Commander): void {
  program
    .command('completion')
    .description('Print a shell completion script: eval "$(corral completion bash)"')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      process.stdout.write(shell === 'bash' ? bash : zsh);
    });
  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .allowUnknownOption(true)
    .action((words: string[]) => {
      process.stdout.write(`${completions(program, words).join('\n')}\n`);
    });
}
