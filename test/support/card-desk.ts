// A card desk whose manual each deployment renders into the system prompt with its own figures
// and clauses (docs/policy.md, "Settings from the system prompt"): the policy reads them as settings.
export const policyText = `policy: card_desk
manual:
  LOGIN: The user is logged in before a card application.
  SCORE: The credit score is higher than the minimum.
  MAX: The amount is at most the limit.
system_sections: '^\\* (?<name>\\w+):'
settings:
  apply_needs_login: {says: 'logged in', in_section: apply_card, default: true}
  min_score: {number: 'credit score is higher than (\\d+)', default: 600}
  max_amount: {number: 'at most (\\d+) dollars', default: 1000}
tools:
  login:
    parameters: {username: string}
    output: text
    labels: {ok: logged in, failed: not logged in}
    labeler: {rules: [{label: ok, regex: '^True$'}, {label: failed, regex: '^False$'}]}
  get_score:
    parameters: {username: string}
    output: text
    labels: {high: above the minimum, low: not above it}
    labeler:
      rules:
        - {label: high, number: '(\\d+)', gt: '\${min_score}'}
        - {label: low, number: '(\\d+)', lte: '\${min_score}'}
  apply_card:
    parameters: {username: string, amount: number}
    output: text
    labels: {ok: applied}
    labeler: {rules: [{label: ok, regex: '^True$'}]}
propositions:
  logged_in: {tool: login, outcome: "o.label == 'ok'"}
  score_high: {tool: get_score, outcome: "o.label == 'high'"}
  apply: {tool: apply_card}
rules:
  - {id: LOGIN, ltl: "G(apply -> O logged_in)", if: "\${apply_needs_login}"}
  - {id: SCORE, ltl: "G(apply -> O score_high)"}
constraints:
  - {id: MAX, on: apply, require: "a.amount <= \${max_amount}"}
`;

/** A system prompt as a deployment renders the manual: one section per action. */
export function manual(applyCard: string): string {
  return `You are the card desk.\n* login:\nNone\n* apply_card:\n${applyCard}\n* get_score:\nThe user must be logged in.`;
}

export const withoutLogin = manual(
  "The credit score is higher than 700. The amount is at most 5000 dollars.",
);
export const withLogin = manual("The user is logged in previously. The credit score is higher than 600.");
