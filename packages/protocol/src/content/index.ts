export {
  type ContentFile,
  EXACT_TOKEN_CHARS,
  indexTokens,
  type SkillContent,
  type SkillContentFile,
  type SkillContentInput,
  type SkillProblem,
  scanSkillContent,
  skillContent,
  skillContentHash,
} from './skill-content.js';
